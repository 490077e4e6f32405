package adminusers

import (
	"testing"

	"github.com/mediacatalog/service/shared/httpapi/httpapitest"
)

// FuzzDecodeEditUser fuzzes the body of POST /admin-users/edit/{id}.
func FuzzDecodeEditUser(f *testing.F) {
	httpapitest.FuzzDecode[editUserRequest](f,
		`{"username":"alice","age_verified":true,"added_roles":[1],"removed_roles":[2]}`,
		`{"username":"al\u0000ice"}`,
		`{"username":"alice","age_verified":"yes"}`,
		`{"username":"alice","added_roles":[9223372036854775808]}`)
}
