package readiness_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mediacatalog/service/shared/readiness"
)

// answer is the group's healthy result with change applied.
func answer(group string, change func(*readiness.Result)) readiness.Result {
	r := readiness.Result{Ready: true}
	for _, d := range readiness.Dependencies[group] {
		r.Checks = append(r.Checks, readiness.Check{Name: d, OK: true})
	}
	for _, p := range readiness.Probes[group] {
		body := `[]`
		if p.Data != "" {
			body = fmt.Sprintf(`{"data":%q,"code":%d}`, p.Data, p.Status)
		}
		r.Checks = append(r.Checks, readiness.Check{Name: p.Name(), OK: true, Status: p.Status, Body: body})
	}
	if change != nil {
		change(&r)
	}
	return r
}

// probe sets the answer of the group's route probe i.
func probe(i, status int, body string) func(*readiness.Result) {
	return func(r *readiness.Result) {
		c := &r.Checks[len(r.Checks)-len(readiness.Probes["admin-users"])+i]
		c.Status, c.Body = status, body
	}
}

// TestJudge: a result is ready only with every dependency checked and passed, every
// route probe served with the contract's status and Response Model (judged again,
// whatever the version says of it), and the version's own word.
func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name, group string
		result      readiness.Result
		err         string // "" for ready
	}{
		{"healthy", "admin-users", answer("admin-users", nil), ""},
		{"healthy list", "tags", answer("tags", nil), ""},
		{"healthy cdn", "cdn", answer("cdn", nil), ""},
		{"a dependency missing", "admin-users", answer("admin-users", func(r *readiness.Result) { r.Checks = r.Checks[1:] }), "secrets: not checked"},
		{"a dependency failed", "admin-users", answer("admin-users", func(r *readiness.Result) {
			r.Checks[1].OK, r.Checks[1].Detail, r.Ready = false, "connection refused", false
		}), "postgres: connection refused"},
		{"401 to the probe's session", "admin-users", answer("admin-users", probe(1, 401, `{"data":"Unauthorized","code":401}`)), "status 401, want 404"},
		{"404 without a session", "admin-users", answer("admin-users", probe(0, 404, `{"data":"Not found","code":404}`)), "status 404, want 401"},
		{"another message", "admin-users", answer("admin-users", probe(1, 404, `{"data":"Not found","code":404}`)), `want "User not found"`},
		{"not a Response Model", "admin-users", answer("admin-users", probe(0, 401, `Unauthorized`)), "not a Response Model"},
		{"the code is not the status", "admin-users", answer("admin-users", probe(0, 401, `{"data":"Unauthorized","code":200}`)), "code 200"},
		{"a list that is not one", "tags", answer("tags", func(r *readiness.Result) { r.Checks[2].Body = `{"data":"x","code":200}` }), "not the route's list"},
		{"a probe missing", "tags", answer("tags", func(r *readiness.Result) { r.Checks = r.Checks[:2] }), "not served"},
		{"passed by the version, wrong by the rules", "tags", answer("tags", func(r *readiness.Result) { r.Checks[2].Status = 404 }), "status 404, want 200"},
		{"not ready by its own word", "tags", answer("tags", func(r *readiness.Result) { r.Ready = false }), "reports it is not ready"},
		{"an empty answer", "tags", readiness.Result{}, "not checked"},
		{"an unknown group", "deploy-hook", answer("tags", nil), "no readiness checks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := readiness.Judge(tc.group, tc.result)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("not ready: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want one saying %q", err, tc.err)
			}
		})
	}
}

// TestProbes: every group has a route probe answered neither 401 nor 404, so that a
// version answering either to everything fails; each probe is a route of the group's
// own path with no body.
func TestProbes(t *testing.T) {
	for group, ps := range readiness.Probes {
		other := false
		for _, p := range ps {
			if p.Status != 401 && p.Status != 404 {
				other = true
			}
			if _, path, _ := strings.Cut(p.RouteKey, " "); !strings.HasPrefix(p.Path, strings.Split(path, "{")[0]) {
				t.Errorf("%s: probe path %s is not of route %s", group, p.Path, p.RouteKey)
			}
		}
		statuses := map[int]bool{}
		for _, p := range ps {
			statuses[p.Status] = true
		}
		if !other && !(statuses[401] && statuses[404]) {
			t.Errorf("%s: the probes' statuses %v let a version answering 401 or 404 to everything pass", group, statuses)
		}
	}
}
