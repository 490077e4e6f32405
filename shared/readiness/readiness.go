// Package readiness is the readiness probe of the route groups' functions: what the
// deploy hook (shared/deployhook) asks a new version before any traffic shifts to it,
// what the version answers, and how the answer is judged.
//
// The probe is a Lambda invocation whose payload is {"readinessProbe":{}}, which the
// Lambda entry (shared/lambdahttp) tells apart from an API Gateway event: API Gateway
// builds every event itself, and none has that field, so nothing sent to the API can be
// taken for a probe; only a principal that may invoke the function can send one. The
// version answers a Result within Timeout: each of its dependencies checked (its
// secrets, the database, DynamoDB or S3 where its group uses them), and its group's
// Probes, each a request of a route served in the process through the same entry as
// an API request (with the origin secret CloudFront would add), whose status and
// Response Model must be the contract's. A version that answers 401 or 404 to
// everything, or cannot reach its database or lacks its secrets, is not ready.
//
// The package uses the standard library only: every function links it.
package readiness

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Field is the payload's field that makes an invocation a readiness probe.
const Field = "readinessProbe"

// Payload is the invocation's payload.
var Payload = []byte(`{"` + Field + `":{}}`)

// Request is the probe's part of the payload; it carries nothing yet, so that what a
// probe does depends on the version alone.
type Request struct{}

// Timeout bounds the version's answer: its checks run at once, its route probes one
// after the other, all within it. The hook's own wait (deployhook.ProbeTimeout) adds a
// cold start to it.
const Timeout = 5 * time.Second

// Result is a version's answer to a probe.
type Result struct {
	// Ready is true when every check passed.
	Ready  bool    `json:"ready"`
	Checks []Check `json:"checks"`
}

// Check is one dependency checked, or one route probe served.
type Check struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// Detail says what a failed check met (never a secret's value), or what a passed
	// one saw.
	Detail string `json:"detail,omitempty"`
	// Status and Body are a route probe's answer.
	Status int    `json:"status,omitempty"`
	Body   string `json:"body,omitempty"`
	Millis int64  `json:"ms"`
}

// Dependencies are the checks each group's version must report, by group (the
// function's name after "<stack>-"): "secrets" (what SECRETS_ARN lists was read at
// start, and the origin and signing secrets the group needs are set), "postgres" (a
// query through the pool), "sessions" (the session lookup of a token that names no
// session, as the guard makes it), "dynamodb" (the OAuth state table, by consuming a
// state never issued) and "s3" (the bucket, by listing one key under the prefix of the pictures the group keeps).
// TestReadinessChecks (shared/routegroups) holds each group's wiring to its list.
var Dependencies = map[string][]string{
	"tags":               {"secrets", "postgres"},
	"publishers":         {"secrets", "postgres"},
	"cdn":                {"secrets", "postgres", "s3"},
	"oauth":              {"secrets", "postgres", "sessions", "dynamodb"},
	"admin-users":        {"secrets", "postgres", "sessions", "s3"},
	"admin-roles":        {"secrets", "postgres", "sessions"},
	"admin-permissions":  {"secrets", "postgres", "sessions"},
	"admin-contributors": {"secrets", "postgres", "sessions", "s3"},
}

// Probe is a request of one of the group's routes that reaches its dependencies,
// needs no account and changes nothing, and the answer the contract gives for it.
type Probe struct {
	RouteKey       string
	Path           string
	PathParameters map[string]string
	Query          url.Values
	// Session: the request carries a refresh token signed by the version itself that
	// names no user and no session (auth.Sessions.ProbeToken), which the contract
	// answers 404 User not found: the version verifies its own tokens and asks the
	// database.
	Session bool
	Status  int
	// Data is the Response Model's message; "" wants the route's list instead (a JSON
	// array, empty or not), as the public lists answer.
	Data string
}

// maxID is the largest id: never a user's (ids are an identity counted from 1).
const maxID = "9223372036854775807"

// Probes are the route probes by group: each group has one whose answer is neither 401
// nor 404, and the groups behind a session one that is 401 without it.
var Probes = map[string][]Probe{
	"tags": {{RouteKey: "GET /tags", Path: "/tags", Query: url.Values{"client": {"1"}}, Status: http.StatusOK}},
	"publishers": {{RouteKey: "GET /publishers", Path: "/publishers",
		Query: url.Values{"client": {"1"}, "limit": {"1"}}, Status: http.StatusOK}},
	"cdn": {
		{RouteKey: "GET /user/avatar/{id}", Path: "/user/avatar/" + maxID, PathParameters: map[string]string{"id": maxID},
			Status: http.StatusNotFound, Data: "User not found"},
		// The change call of a user who never had a picture: one query, no
		// invalidation (its ledger claims nothing), after its 100 ms wait.
		{RouteKey: "POST /user/avatar/change/{id}", Path: "/user/avatar/change/" + maxID, PathParameters: map[string]string{"id": maxID},
			Status: http.StatusOK, Data: "Success"},
	},
	"oauth":              sessionProbes("GET /auth/oauth/connections", "/auth/oauth/connections", nil),
	"admin-users":        sessionProbes("GET /admin-users", "/admin-users", nil),
	"admin-roles":        sessionProbes("GET /admin-roles", "/admin-roles", nil),
	"admin-permissions":  sessionProbes("GET /admin-permissions", "/admin-permissions", nil),
	"admin-contributors": sessionProbes("GET /admin-contributors", "/admin-contributors", url.Values{"client": {"1"}}),
}

// sessionProbes are a session route's two probes: without a cookie 401 Unauthorized,
// with the probe's token 404 User not found.
func sessionProbes(route, path string, query url.Values) []Probe {
	return []Probe{
		{RouteKey: route, Path: path, Query: query, Status: http.StatusUnauthorized, Data: "Unauthorized"},
		{RouteKey: route, Path: path, Query: query, Session: true, Status: http.StatusNotFound, Data: "User not found"},
	}
}

// Method is the probe's HTTP method.
func (p Probe) Method() string { return strings.Fields(p.RouteKey)[0] }

// Name names the probe's check: "GET /admin-users with the probe's session".
func (p Probe) Name() string {
	name := p.Method() + " " + p.Path
	if len(p.Query) > 0 {
		name += "?" + p.Query.Encode()
	}
	if p.Session {
		name += " with the probe's session"
	}
	return name
}

// Judge reports how an answer differs from the probe's: its status, and its body, which
// must be the Response Model {"data": ..., "code": status} with the probe's message, or
// a JSON array when the probe names none.
func (p Probe) Judge(status int, body []byte) error {
	if status != p.Status {
		return fmt.Errorf("status %d, want %d", status, p.Status)
	}
	if p.Data == "" {
		var list []json.RawMessage
		if err := json.Unmarshal(body, &list); err != nil || list == nil {
			return fmt.Errorf("the body is not the route's list: %.200q", body)
		}
		return nil
	}
	var m struct {
		Data json.RawMessage `json:"data"`
		Code int             `json:"code"`
	}
	if err := json.Unmarshal(body, &m); err != nil || len(m.Data) == 0 {
		return fmt.Errorf("the body is not a Response Model: %.200q", body)
	}
	if m.Code != status {
		return fmt.Errorf("the Response Model's code %d, the status %d", m.Code, status)
	}
	var msg string
	if json.Unmarshal(m.Data, &msg) != nil || msg != p.Data {
		return fmt.Errorf("data %.100s, want %q", m.Data, p.Data)
	}
	return nil
}

// Judge reports why a group's version is not ready by its answer: not ready by its own
// account, a dependency or a route probe missing or failed, or a probe's answer that
// is not the contract's (judged again here, so that the caller holds the version to its
// own rules).
func Judge(group string, r Result) error {
	deps, ok := Dependencies[group]
	if !ok {
		return fmt.Errorf("no readiness checks for group %q", group)
	}
	byName := map[string]Check{}
	for _, c := range r.Checks {
		byName[c.Name] = c
	}
	var errs []error
	for _, name := range deps {
		c, ok := byName[name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: not checked", name))
		case !c.OK:
			errs = append(errs, fmt.Errorf("%s: %s", name, c.Detail))
		}
	}
	for _, p := range Probes[group] {
		c, ok := byName[p.Name()]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: not served", p.Name()))
			continue
		}
		if err := p.Judge(c.Status, []byte(c.Body)); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.Name(), err))
		}
	}
	if len(errs) == 0 && !r.Ready {
		errs = append(errs, errors.New("the version reports it is not ready"))
	}
	return errors.Join(errs...)
}
