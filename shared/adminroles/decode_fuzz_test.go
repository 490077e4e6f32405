package adminroles

import (
	"testing"

	"github.com/mediacatalog/service/shared/httpapi/httpapitest"
)

// FuzzDecodeAddRole fuzzes the body of POST /admin-roles/add.
func FuzzDecodeAddRole(f *testing.F) {
	httpapitest.FuzzDecode[addRoleRequest](f,
		`{"name":"moderator","description":"Moderates"}`,
		`{"name":"m\u0000","description":"x"}`,
		`{"name":"m","description":null}`)
}

// FuzzDecodeEditRole fuzzes the body of POST /admin-roles/edit/{id}.
func FuzzDecodeEditRole(f *testing.F) {
	httpapitest.FuzzDecode[editRoleRequest](f,
		`{"name":"moderator","description":"Moderates","added_permissions":[1,2],"removed_permissions":[3]}`,
		`{"name":"moderator","description":null}`,
		`{"name":"moderator","description":"\u0000"}`,
		`{"name":"moderator","description":{"a":"b"}}`,
		`{"name":"moderator","added_permissions":[-1, 1.5, "2"]}`)
}
