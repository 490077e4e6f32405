package tags

import (
	"net/http"

	"github.com/mediacatalog/service/shared/httpapi"
)

// handleTags answers the client's tags ordered by name.
func handleTags(store Store) http.Handler {
	return httpapi.Read(httpapi.Client, store.Tags)
}

// handleTag answers one tag, by the id in its path, with its number of series.
func handleTag(store Store) http.Handler {
	return httpapi.Read(httpapi.PathID, store.TagByID)
}
