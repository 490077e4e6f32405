package routefacts

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mediacatalog/service/shared/httpapi"
)

// EventsDir is the folder of the sample API Gateway events, one a route, in a folder
// per group (sam local invoke -e, and the tests that call each route through its
// function's Lambda entry).
const EventsDir = "events"

// events returns each route's event as it should be, by path relative to root, and
// the event files of no route (nil: to be removed). A route's event is found by its
// routeKey; the facts of the route are written over it (routeKey, rawPath from its
// pathParameters, the method and path of requestContext) and the rest is kept, so
// that an event can carry a hand-made query, body and cookies. A route without one
// gets a new file, named for its method and path: its path parameters and required
// query parameters from the OpenAPI document's examples (Param.Example), a browser's
// headers, and the session cookie the tests replace when the route is neither a
// public read nor internal.
func events(root string, groups []Group, params map[string][]Param) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, g := range groups {
		dir := filepath.Join(EventsDir, g.Name)
		existing := map[string]string{} // routeKey -> path
		files, err := filepath.Glob(filepath.Join(root, dir, "*.json"))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			rel, _ := filepath.Rel(root, f)
			ev, err := readEvent(f)
			if err != nil {
				return nil, err
			}
			key, _ := ev.get("routeKey").str()
			if other, dup := existing[key]; dup {
				return nil, fmt.Errorf("%s and %s are both events of %q", other, rel, key)
			}
			existing[key] = rel
			out[rel] = nil // unless a route claims it below
		}
		for _, rt := range g.Routes {
			ps, ok := params[rt.Pattern]
			if !ok {
				return nil, fmt.Errorf("%s: a route the OpenAPI document does not have", rt.Pattern)
			}
			var ev *jsonNode
			path, found := existing[rt.Pattern]
			if found {
				if ev, err = readEvent(filepath.Join(root, path)); err != nil {
					return nil, err
				}
			} else {
				path = filepath.Join(dir, EventFile(rt))
				if _, err := os.Stat(filepath.Join(root, path)); err == nil {
					return nil, fmt.Errorf("%s: the new event of %s would take the name of another route's", path, rt.Pattern)
				}
				ev = newEvent(rt, ps)
			}
			if err := stampEvent(ev, rt, ps); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			out[path] = ev.marshal()
		}
	}
	return out, nil
}

// EventFile is the name of a route's new event: its method and path's literal
// segments, lower case and hyphenated ("GET /tags/count" -> get-tags-count.json).
func EventFile(rt httpapi.Route) string {
	words := []string{strings.ToLower(rt.Method())}
	for _, seg := range strings.Split(strings.Trim(rt.Path(), "/"), "/") {
		if seg != "" && !strings.HasPrefix(seg, "{") {
			words = append(words, seg)
		}
	}
	return strings.Join(words, "-") + ".json"
}

// stampEvent writes the route's facts over ev: its routeKey, its rawPath and
// requestContext's path from the route's path and ev's pathParameters, its method.
func stampEvent(ev *jsonNode, rt httpapi.Route, ps []Param) error {
	path := rt.Path()
	values := ev.get("pathParameters")
	var names []string
	for _, p := range ps {
		if p.In != "path" {
			continue
		}
		names = append(names, p.Name)
		v, ok := values.get(p.Name).str()
		if !ok {
			return fmt.Errorf("pathParameters has no %s", p.Name)
		}
		path = strings.Replace(path, "{"+p.Name+"}", url.PathEscape(v), 1)
	}
	if values != nil && !slices.Equal(values.keys, names) {
		return fmt.Errorf("pathParameters %v, the route's are %v", values.keys, names)
	}
	ctx := ev.get("requestContext")
	request := ctx.get("http")
	if ctx == nil || request == nil {
		return errors.New("no requestContext.http")
	}
	ev.set("routeKey", jsonString(rt.Pattern))
	ev.set("rawPath", jsonString(path))
	ctx.set("routeKey", jsonString(rt.Pattern))
	request.set("method", jsonString(rt.Method()))
	request.set("path", jsonString(path))
	return nil
}

// newEvent is a route's event when it has none: a browser's request from the
// frontend's origin, through the API's domain.
func newEvent(rt httpapi.Route, ps []Param) *jsonNode {
	sum := sha256.Sum256([]byte(rt.Pattern))
	id := base64.StdEncoding.EncodeToString(sum[:])[:15] + "="
	const agent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"
	var query []string
	pathParams := &jsonNode{kind: '{'}
	for _, p := range ps {
		switch {
		case p.In == "path":
			pathParams.set(p.Name, jsonString(p.Example))
		case p.In == "query" && p.Required:
			query = append(query, p.Name+"="+url.QueryEscape(p.Example))
		}
	}
	ev := &jsonNode{kind: '{'}
	ev.set("version", jsonString("2.0"))
	ev.set("routeKey", jsonString(rt.Pattern))
	ev.set("rawPath", jsonString(rt.Path()))
	ev.set("rawQueryString", jsonString(strings.Join(query, "&")))
	if rt.Cache == "" && !rt.Internal {
		ev.set("cookies", &jsonNode{kind: '[', vals: []*jsonNode{jsonString("refreshToken=REPLACE_WITH_A_TOKEN_FROM_make_token")}})
	}
	headers := &jsonNode{kind: '{'}
	for _, h := range [][2]string{
		{"accept", "application/json"},
		{"accept-encoding", "gzip, deflate, br"},
		{"accept-language", "en-US,en;q=0.9"},
		{"host", "api.mediacatalog.app"},
		{"origin", "https://mediacatalog.app"},
		{"referer", "https://mediacatalog.app/"},
		{"user-agent", agent},
		{"x-forwarded-for", "203.0.113.24"},
		{"x-forwarded-port", "443"},
		{"x-forwarded-proto", "https"},
	} {
		headers.set(h[0], jsonString(h[1]))
	}
	ev.set("headers", headers)
	if len(pathParams.keys) > 0 {
		ev.set("pathParameters", pathParams)
	}
	httpCtx := &jsonNode{kind: '{'}
	for _, kv := range [][2]string{{"method", rt.Method()}, {"path", rt.Path()}, {"protocol", "HTTP/1.1"}, {"sourceIp", "203.0.113.24"}, {"userAgent", agent}} {
		httpCtx.set(kv[0], jsonString(kv[1]))
	}
	ctx := &jsonNode{kind: '{'}
	for _, kv := range [][2]string{{"accountId", "123456789012"}, {"apiId", "a1b2c3d4e5"}, {"domainName", "api.mediacatalog.app"}, {"domainPrefix", "api"}} {
		ctx.set(kv[0], jsonString(kv[1]))
	}
	ctx.set("http", httpCtx)
	ctx.set("requestId", jsonString(id))
	ctx.set("routeKey", jsonString(rt.Pattern))
	ctx.set("stage", jsonString("$default"))
	ctx.set("time", jsonString("12/May/2025:10:00:00 +0000"))
	ctx.set("timeEpoch", &jsonNode{scalar: json.RawMessage("1747044000000")})
	ev.set("requestContext", ctx)
	ev.set("isBase64Encoded", &jsonNode{scalar: json.RawMessage("false")})
	return ev
}

func readEvent(path string) (*jsonNode, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	n, err := parseJSON(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if n.kind != '{' {
		return nil, fmt.Errorf("%s: not an object", path)
	}
	return n, nil
}

// jsonNode is a JSON value whose objects keep their keys' order, so that a file
// rewritten reads as it was written.
type jsonNode struct {
	kind   byte // '{', '[', or 0 for a scalar
	keys   []string
	vals   []*jsonNode
	scalar json.RawMessage
}

func jsonString(s string) *jsonNode {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return &jsonNode{scalar: bytes.TrimSpace(b.Bytes())}
}

// get is an object's member; nil when n is nil, not an object, or has none.
func (n *jsonNode) get(key string) *jsonNode {
	if n == nil || n.kind != '{' {
		return nil
	}
	if i := slices.Index(n.keys, key); i >= 0 {
		return n.vals[i]
	}
	return nil
}

// set replaces an object's member, or appends it.
func (n *jsonNode) set(key string, v *jsonNode) {
	if i := slices.Index(n.keys, key); i >= 0 {
		n.vals[i] = v
		return
	}
	n.keys, n.vals = append(n.keys, key), append(n.vals, v)
}

// str is a string scalar's value.
func (n *jsonNode) str() (string, bool) {
	if n == nil || n.kind != 0 {
		return "", false
	}
	var s string
	return s, json.Unmarshal(n.scalar, &s) == nil
}

func parseJSON(b []byte) (*jsonNode, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one value")
	}
	return n, nil
}

func parseValue(dec *json.Decoder) (*jsonNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &jsonNode{kind: byte(t)}
		for dec.More() {
			if n.kind == '{' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
			}
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	case string:
		return jsonString(t), nil
	default:
		b, err := json.Marshal(t)
		return &jsonNode{scalar: b}, err
	}
}

// marshal writes n as json.MarshalIndent would with two spaces, HTML unescaped, and
// a final newline.
func (n *jsonNode) marshal() []byte {
	var b bytes.Buffer
	n.write(&b, "")
	b.WriteString("\n")
	return b.Bytes()
}

func (n *jsonNode) write(b *bytes.Buffer, indent string) {
	if n.kind == 0 {
		b.Write(n.scalar)
		return
	}
	open, end := "{", "}"
	if n.kind == '[' {
		open, end = "[", "]"
	}
	b.WriteString(open)
	if len(n.vals) == 0 {
		b.WriteString(end)
		return
	}
	inner := indent + "  "
	for i, v := range n.vals {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n" + inner)
		if n.kind == '{' {
			b.Write(jsonString(n.keys[i]).scalar)
			b.WriteString(": ")
		}
		v.write(b, inner)
	}
	b.WriteString("\n" + indent + end)
}
