package publishers

import (
	"net/http"

	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
)

// handlePublishers answers GET /publishers: a bare array of the client's publishers.
// lang is accepted and, as the OpenAPI document says, not used for filtering.
func handlePublishers(store Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		client, err := httpapi.Client(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		page, err := httpapi.Paging(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		order, err := httpapi.Order(r, "", catalog.PublisherOrders...)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		search, err := httpapi.Search(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		// lang is not used for filtering (the OpenAPI document), but bounded like every text.
		if _, err := httpapi.QueryText(r, "lang", catalog.MaxLanguage); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		pubs, err := store.Publishers(r.Context(), catalog.PublisherFilter{
			Client: client,
			Search: search,
			Order:  order,
			Limit:  page.Limit,
			Offset: page.Offset,
		})
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.JSON(w, r, http.StatusOK, pubs)
	})
}

// handlePublisher answers GET /publisher/slug/{slug}: the publisher's detail.
func handlePublisher(store Store) http.Handler {
	return httpapi.Read(func(r *http.Request) (string, error) { return httpapi.PathString(r, "slug") }, store.PublisherBySlug)
}

// handleRandomPublisher answers GET /publisher/random: one of the client's publisher
// slugs as a JSON string.
func handleRandomPublisher(store Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		client, err := httpapi.Client(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		slug, err := store.RandomPublisherSlug(r.Context(), client)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.JSON(w, r, http.StatusOK, slug)
	})
}

// publicationsPage is the paged envelope of GET /publisher/publications/{id}.
type publicationsPage struct {
	Publications []catalog.Publication `json:"publications"`
	Max          int64                 `json:"max"`
	MaxExact     bool                  `json:"max_exact"` // false: max is a lower bound
	From         int64                 `json:"from"`
	To           int64                 `json:"to"`
}

// handlePublications answers GET /publisher/publications/{id}: a page of the
// publisher's series in the client's catalog. An unknown publisher has none.
func handlePublications(store Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := httpapi.PathInt(r, "id")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		client, err := httpapi.Client(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		page, err := httpapi.Paging(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		order, err := httpapi.Order(r, catalog.PublisherOrderNameAsc, catalog.PublisherOrders...)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		search, err := httpapi.Search(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		lang, err := httpapi.QueryText(r, "user_lang", catalog.MaxLanguage)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		if lang == "" {
			lang = catalog.DefaultLanguage
		}
		res, err := store.PublisherPublications(r.Context(), catalog.PublicationFilter{
			Publisher: id,
			Client:    client,
			Search:    search,
			Order:     order,
			Language:  lang,
			Limit:     page.Limit,
			Offset:    page.Offset,
		})
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		resp := publicationsPage{Publications: res.Publications, MaxExact: res.Exact}
		resp.Max, resp.From, resp.To = page.Envelope(res.Total, len(res.Publications))
		httpapi.JSON(w, r, http.StatusOK, resp)
	})
}
