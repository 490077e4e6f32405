package admincontributors

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/audit"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
)

// editRequest is the body of POST /admin-contributors/edit/{id}, field by field the
// spec's table. Absent or null nullable fields clear the stored value, as does an
// absent or null links (the contributor is left without links); public defaults to
// false; the arrays default to empty.
type editRequest struct {
	FirstName string   `json:"first_name"`
	LastName  *string  `json:"last_name"`
	Gender    *string  `json:"gender"`
	Type      *string  `json:"type"`
	Links     []string `json:"links"`
	Public    bool     `json:"public"`

	AddedAliases   []catalog.NewContributorAlias `json:"added_aliases"`
	RemovedAliases []int64                       `json:"removed_aliases"`

	AddedDescriptions    []catalog.NewContributorDescription `json:"added_descriptions"`
	RemovedDescriptions  []int64                             `json:"removed_descriptions"`
	ModifiedDescriptions []catalog.ContributorDescription    `json:"modified_descriptions"`

	AddedRelations    []catalog.NewContributorRelation    `json:"added_relations"`
	RemovedRelations  []int64                             `json:"removed_relations"`
	ModifiedRelations []catalog.ContributorRelationChange `json:"modified_relations"`
}

// Validate trims the text fields and demands what each element needs: a first name;
// non-blank links; alias title and language; description text and language (source
// may be empty); relation target and type; positive ids, each modified at most once.
// Whether the ids are this contributor's is the store's to check. Then every text
// is checked against its bound (text).
func (req *editRequest) Validate() error {
	req.FirstName = strings.TrimSpace(req.FirstName)
	req.LastName, req.Gender, req.Type = optional(req.LastName), optional(req.Gender), optional(req.Type)
	ok := req.FirstName != ""
	for i := range req.Links {
		ok = ok && trim(&req.Links[i])
	}
	for i := range req.AddedAliases {
		a := &req.AddedAliases[i]
		ok = ok && trim(&a.Title) && trim(&a.Language)
	}
	for i := range req.AddedDescriptions {
		d := &req.AddedDescriptions[i]
		ok = ok && trim(&d.Description) && trim(&d.Language)
		d.Source = strings.TrimSpace(d.Source)
	}
	modified := make([]int64, 0, len(req.ModifiedDescriptions))
	for i := range req.ModifiedDescriptions {
		d := &req.ModifiedDescriptions[i]
		ok = ok && trim(&d.Description) && trim(&d.Language)
		d.Source = strings.TrimSpace(d.Source)
		modified = append(modified, d.ID)
	}
	ok = ok && distinctIDs(modified)
	for i := range req.AddedRelations {
		rel := &req.AddedRelations[i]
		ok = ok && rel.RelationID > 0 && trim(&rel.Type)
	}
	modified = modified[:0]
	for i := range req.ModifiedRelations {
		rel := &req.ModifiedRelations[i]
		ok = ok && rel.RelationID > 0 && trim(&rel.Type)
		modified = append(modified, rel.ID)
	}
	ok = ok && distinctIDs(modified) &&
		positive(req.RemovedAliases) && positive(req.RemovedDescriptions) && positive(req.RemovedRelations)
	if !ok {
		return apperr.MissingParams()
	}
	return req.text()
}

// text checks each text field of the edit with its bound and kind: links are
// catalog.WebLinks (javascript: and other schemes are refused, so no stored link runs
// in the frontend), a description's source is a catalog.SourceText, its text Prose,
// the rest Names. An element's field is named as the array's and the field's.
func (req *editRequest) text() error {
	errs := []error{
		nameText(req.FirstName, req.LastName),
		httpapi.OptionalText("gender", req.Gender, catalog.MaxLabel, httpapi.Name),
		httpapi.OptionalText("type", req.Type, catalog.MaxLabel, httpapi.Name),
	}
	for _, l := range req.Links {
		errs = append(errs, httpapi.Text("links", l, catalog.MaxLink, httpapi.Link))
	}
	for _, a := range req.AddedAliases {
		errs = append(errs, httpapi.Text("added_aliases.title", a.Title, catalog.MaxAliasTitle, httpapi.Name),
			httpapi.Text("added_aliases.language", a.Language, catalog.MaxLanguage, httpapi.Name))
	}
	description := func(array, text, language, source string) {
		errs = append(errs, httpapi.Text(array+".description", text, catalog.MaxContributorText, httpapi.Prose),
			httpapi.Text(array+".language", language, catalog.MaxLanguage, httpapi.Name),
			httpapi.Text(array+".source", source, catalog.MaxLink, httpapi.Source))
	}
	for _, d := range req.AddedDescriptions {
		description("added_descriptions", d.Description, d.Language, d.Source)
	}
	for _, d := range req.ModifiedDescriptions {
		description("modified_descriptions", d.Description, d.Language, d.Source)
	}
	for _, rel := range req.AddedRelations {
		errs = append(errs, httpapi.Text("added_relations.type", rel.Type, catalog.MaxLabel, httpapi.Name))
	}
	for _, rel := range req.ModifiedRelations {
		errs = append(errs, httpapi.Text("modified_relations.type", rel.Type, catalog.MaxLabel, httpapi.Name))
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// handleEditContributor serves POST /admin-contributors/edit/{id}: the whole edit in one
// transaction, which also releases the editor's lock.
func handleEditContributor(store Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := httpapi.PathInt(r, "id")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		req, err := httpapi.Decode[editRequest](w, r, 0)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		var editor int64
		if p, ok := auth.FromContext(r.Context()); ok {
			editor = p.UserID
		}
		edit := catalog.ContributorEdit{
			FirstName:            req.FirstName,
			LastName:             req.LastName,
			Gender:               req.Gender,
			Type:                 req.Type,
			Public:               req.Public,
			Links:                req.Links,
			AddedAliases:         req.AddedAliases,
			RemovedAliases:       req.RemovedAliases,
			AddedDescriptions:    req.AddedDescriptions,
			RemovedDescriptions:  req.RemovedDescriptions,
			ModifiedDescriptions: req.ModifiedDescriptions,
			AddedRelations:       req.AddedRelations,
			RemovedRelations:     req.RemovedRelations,
			ModifiedRelations:    req.ModifiedRelations,
		}
		if err := store.EditContributor(r.Context(), id, editor, edit); err != nil {
			httpapi.Error(w, r, failed(err, msgUpdateFailed))
			return
		}
		audit.Record(r.Context(), "contributor.edit", "contributor", id, editChanges(edit)...)
		httpapi.OK(w, r, msgUpdated)
	})
}

// trim trims *s in place and reports whether anything is left.
func trim(s *string) bool {
	*s = strings.TrimSpace(*s)
	return *s != ""
}

// positive reports whether every id is positive.
func positive(ids []int64) bool {
	for _, id := range ids {
		if id <= 0 {
			return false
		}
	}
	return true
}

// distinctIDs reports whether the ids are positive and none repeats.
func distinctIDs(ids []int64) bool {
	seen := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if id <= 0 || seen[id] {
			return false
		}
		seen[id] = true
	}
	return true
}

// editChanges is what an audit record says of a contributor edit: the fields it sets,
// and the ids it removes and how many items it adds or modifies.
func editChanges(e catalog.ContributorEdit) []slog.Attr {
	return []slog.Attr{
		slog.String("first_name", e.FirstName), slog.Any("last_name", e.LastName),
		slog.Any("gender", e.Gender), slog.Any("type", e.Type), slog.Bool("public", e.Public),
		slog.Any("links", e.Links),
		slog.Int("added_aliases", len(e.AddedAliases)), slog.Any("removed_aliases", e.RemovedAliases),
		slog.Int("added_descriptions", len(e.AddedDescriptions)), slog.Any("removed_descriptions", e.RemovedDescriptions),
		slog.Int("modified_descriptions", len(e.ModifiedDescriptions)),
		slog.Int("added_relations", len(e.AddedRelations)), slog.Any("removed_relations", e.RemovedRelations),
		slog.Int("modified_relations", len(e.ModifiedRelations)),
	}
}
