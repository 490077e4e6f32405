package routefacts

import (
	"encoding/json"
	"testing"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/mediacatalog/service/shared/httpapi"
)

// TestNewEvent: a route without an event gets one its function can be invoked with:
// the path and required query filled from the OpenAPI document's examples, the
// session cookie unless the route is a public read or internal.
func TestNewEvent(t *testing.T) {
	params, err := Params()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		route          httpapi.Route
		path, query    string
		pathParameters map[string]string
		cookie         bool
	}{
		{httpapi.Route{Pattern: "GET /tags/id/{id}", Cache: httpapi.CacheCatalog}, "/tags/id/1", "", map[string]string{"id": "1"}, false},
		{httpapi.Route{Pattern: "GET /publisher/random", Cache: httpapi.CacheRandom}, "/publisher/random", "client=1", nil, false},
		{httpapi.Route{Pattern: "DELETE /auth/oauth/unlink/{provider}"}, "/auth/oauth/unlink/google", "", map[string]string{"provider": "google"}, true},
		{httpapi.Route{Pattern: "POST /user/avatar/change/{id}", Internal: true}, "/user/avatar/change/1", "", map[string]string{"id": "1"}, false},
	} {
		ev := newEvent(tc.route, params[tc.route.Pattern])
		if err := stampEvent(ev, tc.route, params[tc.route.Pattern]); err != nil {
			t.Fatalf("%s: %v", tc.route.Pattern, err)
		}
		b := ev.marshal()
		var got lambdaevents.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v\n%s", tc.route.Pattern, err, b)
		}
		if got.RouteKey != tc.route.Pattern || got.RawPath != tc.path || got.RawQueryString != tc.query ||
			got.RequestContext.HTTP.Method != tc.route.Method() || got.RequestContext.HTTP.Path != tc.path ||
			len(got.PathParameters) != len(tc.pathParameters) || (len(got.Cookies) > 0) != tc.cookie {
			t.Errorf("%s: %s", tc.route.Pattern, b)
		}
		for k, v := range tc.pathParameters {
			if got.PathParameters[k] != v {
				t.Errorf("%s: path parameter %s %q, want %q", tc.route.Pattern, k, got.PathParameters[k], v)
			}
		}
	}
}
