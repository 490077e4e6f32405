package openapi_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/openapi"
)

// unbounded are the request texts without a maxLength, each with the reason.
var unbounded = map[string]string{
	"ImageUpload.image":       "bounded in bytes by IMAGE_MAX_BYTES and the request body limit",
	"query code":              "the provider's authorization code, passed back to the provider; a callback redirects, never 400",
	"query state":             "compared with the state cookie's hash first; a callback redirects, never 400",
	"query error":             "the provider's error code; a callback redirects with its own reason, never 400",
	"query error_description": "the provider's text, only logged; a callback redirects, never 400",
}

// TestTextLimits holds the document's maxLength of every text a request carries to
// the bounds the code checks (catalog's Max constants, docs/input-limits.md), and
// finds any request text without one.
func TestTextLimits(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.Document)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{
		"UserEdit.username":                        catalog.MaxUsername,
		"RoleEdit.name":                            catalog.MaxRoleName,
		"RoleEdit.description":                     catalog.MaxDescription,
		"RoleAdd.name":                             catalog.MaxRoleName,
		"RoleAdd.description":                      catalog.MaxDescription,
		"PermissionInput.name":                     catalog.MaxPermissionName,
		"PermissionInput.description":              catalog.MaxDescription,
		"ContributorAdd.first_name":                catalog.MaxPersonName,
		"ContributorAdd.last_name":                 catalog.MaxPersonName,
		"ContributorEdit.first_name":               catalog.MaxPersonName,
		"ContributorEdit.last_name":                catalog.MaxPersonName,
		"ContributorEdit.gender":                   catalog.MaxLabel,
		"ContributorEdit.type":                     catalog.MaxLabel,
		"ContributorEdit.links[]":                  catalog.MaxLink,
		"ContributorAliasInput.title":              catalog.MaxAliasTitle,
		"ContributorAliasInput.language":           catalog.MaxLanguage,
		"ContributorDescriptionInput.description":  catalog.MaxContributorText,
		"ContributorDescriptionInput.language":     catalog.MaxLanguage,
		"ContributorDescriptionInput.source":       catalog.MaxLink,
		"ContributorDescriptionChange.description": catalog.MaxContributorText,
		"ContributorDescriptionChange.language":    catalog.MaxLanguage,
		"ContributorDescriptionChange.source":      catalog.MaxLink,
		"ContributorRelationInput.type":            catalog.MaxLabel,
		"ContributorRelationChange.type":           catalog.MaxLabel,
		"query search":                             catalog.MaxSearch,
		"query lang":                               catalog.MaxLanguage,
		"query user_lang":                          catalog.MaxLanguage,
	}
	got := map[string]int{}
	var missing []string
	note := func(key string, s *openapi3.Schema) {
		if s == nil || !(s.Type.Is("string") || s.Type.Includes("string")) || len(s.Enum) > 0 {
			return
		}
		if s.MaxLength == nil {
			if _, ok := unbounded[key]; !ok {
				missing = append(missing, key)
			}
			return
		}
		if prev, ok := got[key]; ok && prev != int(*s.MaxLength) {
			t.Errorf("%s has maxLength %d and %d", key, prev, *s.MaxLength)
		}
		got[key] = int(*s.MaxLength)
	}
	seen := map[string]bool{}
	var walk func(name string, ref *openapi3.SchemaRef)
	walk = func(name string, ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil {
			return
		}
		if ref.Ref != "" {
			name = ref.Ref[strings.LastIndex(ref.Ref, "/")+1:]
			if seen[name] {
				return
			}
			seen[name] = true
		}
		s := ref.Value
		for prop, p := range s.Properties {
			key := name + "." + prop
			note(key, p.Value)
			if p.Value != nil && p.Value.Items != nil {
				note(key+"[]", p.Value.Items.Value)
				walk(key+"[]", p.Value.Items)
			}
			walk(key, p)
		}
		if s.Items != nil {
			walk(name+"[]", s.Items)
		}
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for _, p := range append(item.Parameters, op.Parameters...) {
				if p.Value != nil && p.Value.In == "query" && p.Value.Schema != nil {
					note("query "+p.Value.Name, p.Value.Schema.Value)
				}
			}
			if op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			for _, mt := range op.RequestBody.Value.Content {
				walk(fmt.Sprintf("%s %s", method, path), mt.Schema)
			}
		}
	}
	sort.Strings(missing)
	for _, key := range slices.Compact(missing) {
		t.Errorf("%s: a request text without maxLength", key)
	}
	for key, max := range want {
		if got[key] != max {
			t.Errorf("%s: maxLength %d in the document, %d in the code", key, got[key], max)
		}
	}
}
