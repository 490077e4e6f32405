package routegroups_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mediacatalog/service/shared/httpapi"
)

// TestOriginSecretPerRoute walks the route table of the service as the functions build
// it, with ORIGIN_SECRET and ORIGIN_SECRET_PREVIOUS set: without the secret every
// route is refused with a 403 Response Model but POST /user/avatar/change/{id} (IAM
// authorizes it; internal services call it directly); with either value, none is.
func TestOriginSecretPerRoute(t *testing.T) {
	const now, previous = "origin-secret-now-0123456789abcdefgh", "origin-secret-before-0123456789abcdef"
	s := newServer(t, map[string]string{"ORIGIN_SECRET": now, "ORIGIN_SECRET_PREVIOUS": previous})
	evs := eventsByRoute(t)
	internal := 0
	for _, rt := range s.routes {
		ev, ok := evs[rt.Pattern]
		if !ok {
			t.Errorf("%s: no event in events/ to call it with", rt.Pattern)
			continue
		}
		if rt.Internal {
			internal++
		}
		t.Run(rt.Pattern, func(t *testing.T) {
			for _, secret := range []string{"", "not-the-secret", now, previous} {
				req := eventRequest(t, ev, s.cookie)
				if secret != "" {
					req.Header.Set(httpapi.OriginSecretHeader, secret)
				}
				rec := httptest.NewRecorder()
				s.h.ServeHTTP(rec, req)
				refused := rec.Code == http.StatusForbidden && rec.Body.String() == `{"data":"Forbidden","code":403}`+"\n"
				if want := secret != now && secret != previous && rt.Pattern != "POST /user/avatar/change/{id}"; refused != want {
					t.Errorf("secret %q: %d %s; refused %v, want %v", secret, rec.Code, rec.Body, refused, want)
				}
			}
		})
	}
	if internal != 1 {
		t.Errorf("%d routes exempt from the origin secret, want 1", internal)
	}
}
