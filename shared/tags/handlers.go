package tags

import (
	"net/http"

	"github.com/mediacatalog/service/shared/httpapi"
)

// handleTags answers GET /tags?client=N: the client's tags ordered by name.
func handleTags(store Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		client, err := httpapi.Client(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		tags, err := store.Tags(r.Context(), client)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.JSON(w, r, http.StatusOK, tags)
	})
}

// handleTag answers GET /tags/id/{id}: the tag with its number of series.
func handleTag(store Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := httpapi.PathInt(r, "id")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		tag, err := store.TagByID(r.Context(), id)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.JSON(w, r, http.StatusOK, tag)
	})
}
