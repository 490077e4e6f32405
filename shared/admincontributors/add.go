package admincontributors

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/audit"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
)

// defaultClient is the catalog a contributor joins when the request names none: the
// spec's add body has no client.
const defaultClient = 1

// addRequest is the body of POST /admin-contributors/add. Client is an addition to
// the body the API's contract gives: it falls back to the client query parameter, then to defaultClient.
type addRequest struct {
	FirstName string  `json:"first_name"`
	LastName  *string `json:"last_name"`
	Client    *int64  `json:"client"`
}

// Validate demands a first name and, when given, a positive client; the names are
// Names of at most catalog.MaxPersonName characters each.
func (req *addRequest) Validate() error {
	req.FirstName = strings.TrimSpace(req.FirstName)
	req.LastName = optional(req.LastName)
	if req.FirstName == "" || (req.Client != nil && *req.Client <= 0) {
		return apperr.MissingParams()
	}
	return nameText(req.FirstName, req.LastName)
}

// nameText checks a contributor's first and last name (nil: none).
func nameText(first string, last *string) error {
	if err := httpapi.Text("first_name", first, catalog.MaxPersonName, httpapi.Name); err != nil {
		return err
	}
	return httpapi.OptionalText("last_name", last, catalog.MaxPersonName, httpapi.Name)
}

// handleAddContributor serves POST /admin-contributors/add.
func handleAddContributor(store Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := httpapi.Decode[addRequest](w, r, 0)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		client := int64(defaultClient)
		switch {
		case req.Client != nil:
			client = *req.Client
		case r.URL.Query().Has("client"):
			if client, err = httpapi.Client(r); err != nil {
				httpapi.Error(w, r, err)
				return
			}
		}
		id, err := store.AddContributor(r.Context(), catalog.NewContributor{
			Client:    client,
			FirstName: req.FirstName,
			LastName:  req.LastName,
			Slug:      contributorSlug(req.FirstName, req.LastName),
		})
		if err != nil {
			httpapi.Error(w, r, failed(err, msgAddFailed))
			return
		}
		audit.Record(r.Context(), "contributor.add", "contributor", id, slog.Int64("client", client),
			slog.String("first_name", req.FirstName), slog.Any("last_name", req.LastName))
		httpapi.OK(w, r, msgAdded)
	})
}

// optional trims s; blank is nil, the "not set" of the nullable text fields.
func optional(s *string) *string {
	if s == nil {
		return nil
	}
	t := strings.TrimSpace(*s)
	if t == "" {
		return nil
	}
	return &t
}
