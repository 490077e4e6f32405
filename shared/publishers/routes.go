// Package publishers is the public publisher route group: a client's publishers, one
// publisher by slug, a random publisher, and the publications (series) of a publisher.
// No authentication.
package publishers

import (
	"context"

	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
)

// Store reads publishers and their series; *postgres.DB satisfies it.
type Store interface {
	Publishers(ctx context.Context, f catalog.PublisherFilter) ([]catalog.PublisherListItem, error)
	PublisherBySlug(ctx context.Context, slug string) (catalog.Publisher, error)
	RandomPublisherSlug(ctx context.Context, client int64) (string, error)
	PublisherPublications(ctx context.Context, f catalog.PublicationFilter) (catalog.PublicationPage, error)
}

// Deps are what the group needs.
type Deps struct {
	Store Store
}

// Routes is the group's whole API.
func Routes(d Deps) []httpapi.Route {
	return []httpapi.Route{
		{Pattern: "GET /publishers", Cache: httpapi.CacheCatalog, Handler: handlePublishers(d.Store)},
		{Pattern: "GET /publisher/slug/{slug}", Cache: httpapi.CacheCatalog, Handler: handlePublisher(d.Store)},
		{Pattern: "GET /publisher/random", Cache: httpapi.CacheRandom, Handler: handleRandomPublisher(d.Store)},
		{Pattern: "GET /publisher/publications/{id}", Cache: httpapi.CacheCatalog, Handler: handlePublications(d.Store)},
	}
}
