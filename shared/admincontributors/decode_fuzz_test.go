package admincontributors

import (
	"testing"

	"github.com/mediacatalog/service/shared/httpapi/httpapitest"
)

// FuzzDecodeAddContributor fuzzes the body of POST /admin-contributors/add.
func FuzzDecodeAddContributor(f *testing.F) {
	httpapitest.FuzzDecode[addRequest](f,
		`{"first_name":"Naoko","last_name":"Takeuchi","client":1}`,
		`{"first_name":"Naoko","last_name":null}`,
		`{"first_name":"Na\u0000oko"}`,
		`{"first_name":"Naoko","client":-1}`)
}

// FuzzDecodeEditContributor fuzzes the body of POST /admin-contributors/edit/{id}, with
// its nested arrays of objects.
func FuzzDecodeEditContributor(f *testing.F) {
	httpapitest.FuzzDecode[editRequest](f,
		`{"first_name":"Naoko","last_name":"Takeuchi","gender":"f","type":"artist","public":true,"links":["https://example.com"],`+
			`"added_aliases":[{"title":"NT","language":"en"}],"removed_aliases":[1],`+
			`"added_descriptions":[{"description":"d","language":"en","source":"s"}],"removed_descriptions":[2],`+
			`"modified_descriptions":[{"id":3,"description":"d","language":"en","source":""}],`+
			`"added_relations":[{"relation_id":2,"type":"spouse"}],"removed_relations":[4],`+
			`"modified_relations":[{"id":5,"relation_id":3,"type":"friend"}]}`,
		`{"first_name":"N","links":["a\u0000"]}`,
		`{"first_name":"N","added_descriptions":[{"description":"\u0000","language":"en"}]}`,
		`{"first_name":"N","gender":"\u0000"}`,
		`{"first_name":"N","modified_descriptions":[{"id":3,"description":"d","language":"en"},{"id":3,"description":"e","language":"en"}]}`)
}
