package faults_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/cdn"
	"github.com/mediacatalog/service/shared/deadlines"
	"github.com/mediacatalog/service/shared/dependency"
)

// The targets of a hung dependency, as wall-clock bounds loose enough for a loaded
// 2-core machine and far below the functions' timeouts (10-25 s), which a request
// waited before the budget and the breakers: every answer within firstBound of its
// start (the target is 5 s), within openBound once the dependency's breaker is open
// (the target is 0.1 s; a request that happens to be the half-open probe waits up to
// deadlines.ProbeTimeout), and the service back within recoverBound of the
// dependency's (the target is 1 s). The figures are printed.
const (
	firstBound   = 7 * time.Second
	openBound    = deadlines.ProbeTimeout + 500*time.Millisecond
	recoverBound = 3 * time.Second
)

// probe is one request sent while a dependency hangs, and the answer it must get.
type probe struct {
	name, method, path string
	body               func() any
	auth               bool
	status             int
	msg                string // "": any
	failed             bool   // failed by the dependency: Retry-After
}

// wave sends the probes at once and checks each answer: status, message, Retry-After,
// and its time against limit. It prints one line per probe: the rows of the table.
func (r *rig) wave(phase string, limit time.Duration, ps []probe) {
	r.t.Helper()
	answers := make([]answer, len(ps))
	var wg sync.WaitGroup
	for i, p := range ps {
		var body any
		if p.body != nil {
			body = p.body()
		}
		wg.Go(func() { answers[i] = r.call(p.method, p.path, body, p.auth) })
	}
	wg.Wait()
	for i, p := range ps {
		a := answers[i]
		r.t.Logf("| %s | `%s %s` | %d | %.3f s |", phase, p.method, p.path, a.status, a.elapsed.Seconds())
		if a.status != p.status || (p.msg != "" && a.resp.Data != p.msg) {
			r.t.Errorf("%s: %s: %d %q, want %d %q", phase, p.name, a.status, a.resp.Data, p.status, p.msg)
		}
		if p.failed && a.retryAfter == "" {
			r.t.Errorf("%s: %s: %d without Retry-After", phase, p.name, a.status)
		}
		if a.elapsed > limit {
			r.t.Errorf("%s: %s answered after %.3f s, beyond %v", phase, p.name, a.elapsed.Seconds(), limit)
		}
	}
}

// opened is how often the process's breakers of dependency name opened.
func opened(name string) uint64 { return dependency.StateChanges()[name+" open"] }

// recoversWithin polls a request every 50 ms from the moment the dependency is back
// until it answers want, and fails past recoverBound.
func (r *rig) recoversWithin(what, method, path string, want int) {
	r.t.Helper()
	start := time.Now()
	for {
		a := r.call(method, path, nil, false)
		if a.status == want {
			r.t.Logf("| recovery | `%s %s` | %d | %.3f s after the dependency came back |", method, path, want, time.Since(start).Seconds())
			if d := time.Since(start); d > recoverBound {
				r.t.Errorf("%s: back %.3f s after the dependency, beyond %v", what, d.Seconds(), recoverBound)
			}
			return
		}
		if time.Since(start) > 20*time.Second {
			r.t.Fatalf("%s: still %d %q", what, a.status, a.resp.Data)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestStalls holds each dependency hung (PostgreSQL stopped with SIGSTOP, DynamoDB and
// S3 behind a relay that accepts and never answers), on the routes with their
// functions' real timeouts, to the targets above: every request answered within
// seconds of its start, at once once the dependency's breaker is open, with a Response
// Model (503 and Retry-After for a read, the OpenAPI document's 500 for a write); what needs no
// such dependency unaffected; a picture the cdn served before a database stall still
// served; and nothing lost or half-written.
func TestStalls(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own PostgreSQL, dynalite and S3")
	}
	r := newRig(t)
	// User 2's picture served before the stalls, user 1's stored and never served.
	r.expect("upload user 2", r.call("POST", "/admin-users/update-image/2", upload(), true), 200, "")
	r.expect("upload user 1", r.call("POST", "/admin-users/update-image/1", upload(), true), 200, "")
	r.expect("GET /user/avatar/2 before", r.call("GET", "/user/avatar/2", nil, false), 200, "")
	r.expect("GET /tags before", r.call("GET", "/tags?client=1", nil, false), 200, "")
	// Past the cdn's reuse of a read reference: a stall's first request for user 2 reads
	// it again, and waits for the database.
	time.Sleep(2 * cdn.DefaultRefMaxAge)
	unavailable := apperr.MsgUnavailable

	t.Run("postgres hung", func(t *testing.T) {
		r.t = t
		before := opened("postgres")
		frozen := true
		defer func() {
			if frozen {
				r.thaw()
			}
		}()
		r.freeze()
		probes := []probe{
			{"tags", "GET", "/tags?client=1", nil, false, 503, unavailable, true},
			{"tag", "GET", "/tags/id/1", nil, false, 503, unavailable, true},
			{"publisher", "GET", "/publisher/slug/kodansha", nil, false, 503, unavailable, true},
			{"roles", "GET", "/admin-roles", nil, true, 503, unavailable, true},
			{"users", "GET", "/admin-users", nil, true, 503, unavailable, true},
			{"upload", "POST", "/admin-users/update-image/3", upload, true, 500, apperr.MsgInternal, true},
			{"add role", "POST", "/admin-roles/add", func() any { return map[string]string{"name": "while-hung", "description": "d"} }, true, 500, apperr.MsgInternal, true},
			{"avatar never served", "GET", "/user/avatar/3/high", nil, false, 503, unavailable, true},
			{"avatar served before", "GET", "/user/avatar/2", nil, false, 200, "", false},
			{"oauth start", "GET", "/auth/oauth/google", nil, false, 302, "", false},
			{"no route", "GET", "/no/such/route", nil, false, 404, "", false},
		}
		r.wave("postgres hung, first", firstBound, probes)
		if opened("postgres") == before {
			t.Fatal("the PostgreSQL breaker did not open")
		}
		r.wave("postgres hung, breaker open", openBound, probes)
		r.thaw()
		frozen = false
		r.recoversWithin("GET /tags", "GET", "/tags?client=1", 200)
		r.expect("GET /user/avatar/2 after", r.call("GET", "/user/avatar/2", nil, false), 200, "")
		if n := r.query(`SELECT count(*)::text FROM roles WHERE name = 'while-hung'`); n != "0" {
			t.Errorf("the role added while PostgreSQL hung exists (%s rows), yet the client was told 500", n)
		}
		r.imagesConsistent(3)
	})

	t.Run("dynamodb hung", func(t *testing.T) {
		r.t = t
		before := opened("dynamodb")
		r.dynPx.silence()
		defer r.dynPx.forward(hostPort(t, r.dyn.Endpoint))
		probes := []probe{
			{"oauth start", "GET", "/auth/oauth/google", nil, false, 503, "Service temporarily unavailable", true},
			{"tags", "GET", "/tags?client=1", nil, false, 200, "", false},
			{"avatar served before", "GET", "/user/avatar/2", nil, false, 200, "", false},
		}
		r.wave("dynamodb hung, first", firstBound, probes)
		// The start reads the rate limit and, when admitted, writes the state: twice, so
		// that the breaker has seen its consecutive timeouts.
		r.wave("dynamodb hung, second", firstBound, probes[:1])
		if opened("dynamodb") == before {
			t.Fatal("the DynamoDB breaker did not open")
		}
		r.wave("dynamodb hung, breaker open", openBound, probes)
		r.dynPx.forward(hostPort(t, r.dyn.Endpoint))
		r.recoversWithin("GET /auth/oauth/google", "GET", "/auth/oauth/google", 302)
	})

	t.Run("s3 hung", func(t *testing.T) {
		r.t = t
		before := opened("s3")
		ref := r.imagesConsistent(2)
		r.s3Px.silence()
		defer r.s3Px.forward(hostPort(t, r.s3svc.Endpoint))
		probes := []probe{
			{"upload", "POST", "/admin-users/update-image/2", upload, true, 500, apperr.MsgInternal, true},
			{"avatar never served", "GET", "/user/avatar/1", nil, false, 503, unavailable, true},
			{"avatar never served, high", "GET", "/user/avatar/1/high", nil, false, 503, unavailable, true},
			{"avatar served before", "GET", "/user/avatar/2", nil, false, 200, "", false},
			{"tags", "GET", "/tags?client=1", nil, false, 200, "", false},
		}
		r.wave("s3 hung, first", firstBound, probes)
		if opened("s3") == before {
			t.Fatal("no S3 breaker opened")
		}
		r.wave("s3 hung, breaker open", openBound, probes)
		r.s3Px.forward(hostPort(t, r.s3svc.Endpoint))
		r.recoversWithin("GET /user/avatar/1", "GET", "/user/avatar/1", 200)
		if got := r.imagesConsistent(2); got != ref {
			t.Errorf("user 2's row changed from %s to %s though every upload failed", ref, got)
		}
	})
	t.Log("breaker state changes: " + strings.TrimSpace(fmt.Sprint(dependency.StateChanges())))
}
