package adminpermissions

import (
	"testing"

	"github.com/mediacatalog/service/shared/httpapi/httpapitest"
)

// FuzzDecodePermission fuzzes the body of POST /admin-permissions/add and /edit/{id}.
func FuzzDecodePermission(f *testing.F) {
	httpapitest.FuzzDecode[permissionRequest](f,
		`{"name":"view-things","description":"Views things"}`,
		`{"name":" ","description":"x"}`,
		`{"name":"a\u0000","description":"x"}`,
		`{"name":null,"description":"x"}`,
		`{"name":["x"],"description":{}}`)
}
