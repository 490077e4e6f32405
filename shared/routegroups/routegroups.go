// Package routegroups lists every route group: the local server serves them all on one
// mux, and the tests hold the code, template.yaml and the OpenAPI document together
// through it. The functions do not import it: each links only its own group.
package routegroups

import (
	"github.com/mediacatalog/service/shared/admincontributors"
	"github.com/mediacatalog/service/shared/adminpermissions"
	"github.com/mediacatalog/service/shared/adminroles"
	"github.com/mediacatalog/service/shared/adminusers"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/cdn"
	"github.com/mediacatalog/service/shared/oauth"
	"github.com/mediacatalog/service/shared/publishers"
	"github.com/mediacatalog/service/shared/tags"
)

// All returns every route group, sorted by name.
func All() []app.Group {
	return []app.Group{
		admincontributors.Group, adminpermissions.Group, adminroles.Group, adminusers.Group,
		cdn.Group, oauth.Group, publishers.Group, tags.Group,
	}
}
