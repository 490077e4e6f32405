package admincontributors

import (
	"net/http"

	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
)

// The list's orders: by first name, last name and id.
const (
	orderNameAsc  = "name-asc"
	orderNameDesc = "name-desc"
)

// handleContributors serves GET /admin-contributors: one page of a client's
// contributors, each with the holder of its live edit lock.
func handleContributors(store Store) http.Handler {
	type response struct {
		Contributors []catalog.ContributorListItem `json:"contributors"`
		Max          int64                         `json:"max"`
		MaxExact     bool                          `json:"max_exact"` // false: max is a lower bound
		From         int64                         `json:"from"`
		To           int64                         `json:"to"`
	}
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
		order, err := httpapi.Order(r, orderNameAsc, orderNameAsc, orderNameDesc)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		search, err := httpapi.Search(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		res, err := store.Contributors(r.Context(), catalog.ContributorQuery{
			Client:     client,
			Search:     search,
			Descending: order == orderNameDesc,
			Limit:      page.Limit,
			Offset:     page.Offset,
		})
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		max, from, to := page.Envelope(res.Total, len(res.Contributors))
		httpapi.JSON(w, r, http.StatusOK, response{Contributors: res.Contributors, Max: max, MaxExact: res.Exact, From: from, To: to})
	})
}
