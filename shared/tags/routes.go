// Package tags is the public tag route group: a client's tags, and one tag with its
// number of series. No authentication.
package tags

import (
	"context"

	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
)

// Store reads tags; *postgres.DB satisfies it.
type Store interface {
	Tags(ctx context.Context, client int64) ([]catalog.Tag, error)
	TagByID(ctx context.Context, id int64) (catalog.TagDetail, error)
}

// Deps are what the group needs.
type Deps struct {
	Store Store
}

// Routes is the group's whole API.
func Routes(d Deps) []httpapi.Route {
	return []httpapi.Route{
		{Pattern: "GET /tags", Cache: httpapi.CacheCatalog, Handler: handleTags(d.Store)},
		{Pattern: "GET /tags/id/{id}", Cache: httpapi.CacheCatalog, Handler: handleTag(d.Store)},
	}
}
