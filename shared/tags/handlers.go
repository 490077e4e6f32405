package tags

import (
	"net/http"

	"github.com/mediacatalog/service/shared/httpapi"
)

// handleTags answers GET /tags?client=N: the client's tags ordered by name.
func handleTags(store Store) http.Handler {
	return httpapi.Read(httpapi.Client, store.Tags)
}

// handleTag answers GET /tags/id/{id}: the tag with its number of series.
func handleTag(store Store) http.Handler {
	return httpapi.Read(httpapi.PathID, store.TagByID)
}
