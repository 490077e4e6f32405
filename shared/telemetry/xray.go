package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// XRayExporter sends spans to the X-Ray daemon as segment documents, one UDP datagram
// each, in the daemon's protocol: a header line and the document's JSON
// (https://docs.aws.amazon.com/xray/latest/devguide/xray-api-sendingdata.html).
//
// It is ours because OpenTelemetry's Go exporters speak OTLP, which needs a collector
// (the ADOT layer, which costs every cold start), and aws-otel-go's UDP exporter is not
// available to this build. A span whose parent is remote (Lambda's own segment) or
// local becomes a subsegment naming its parent; a span without a parent, as the local
// server's are, a segment of its own.
type XRayExporter struct {
	addr string
	mu   sync.Mutex
	conn net.Conn
	buf  []byte // the datagram being written, kept between exports
}

// NewXRayExporter sends to addr: AWS_XRAY_DAEMON_ADDRESS, "host:port" or the daemon's
// "tcp:host:port udp:host:port" form, of which the UDP address is used.
func NewXRayExporter(addr string) *XRayExporter {
	for f := range strings.FieldsSeq(addr) {
		if a, ok := strings.CutPrefix(f, "udp:"); ok {
			addr = a
		}
	}
	return &XRayExporter{addr: addr}
}

const xrayHeader = "{\"format\": \"json\", \"version\": 1}\n"

// maxDatagram is the largest datagram the daemon takes.
const maxDatagram = 64 << 10

// ExportSpans writes one datagram per tree of the spans: a span whose parent is among
// them is nested in its parent's document (X-Ray's "subsegments"), so an invocation's
// spans, flushed together, are one datagram. A tree over the daemon's 64 KB goes out
// as one document per span; a single span over it is not sent (the error says so).
func (e *XRayExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.conn == nil {
		c, err := net.Dial("udp", e.addr)
		if err != nil {
			return err
		}
		e.conn = c
	}
	nodes := make([]node, len(spans))
	byID := make(map[trace.SpanID]*node, len(spans))
	for i, s := range spans {
		nodes[i].span = s
		byID[s.SpanContext().SpanID()] = &nodes[i]
	}
	var roots []*node
	for i := range nodes {
		n := &nodes[i]
		if p, ok := byID[n.span.Parent().SpanID()]; ok && n.span.Parent().IsValid() {
			p.kids = append(p.kids, n)
			continue
		}
		roots = append(roots, n)
	}
	var errs []error
	for _, root := range roots {
		e.buf = appendSpan(append(e.buf[:0], xrayHeader...), root, false, true)
		if len(e.buf) > maxDatagram {
			errs = append(errs, e.flat(root)...)
			continue
		}
		errs = append(errs, e.send())
	}
	return errors.Join(errs...)
}

// node is a span and the spans under it in one export.
type node struct {
	span sdktrace.ReadOnlySpan
	kids []*node
}

// flat sends each span of a tree as a document of its own, naming its parent.
func (e *XRayExporter) flat(n *node) []error {
	e.buf = appendSpan(append(e.buf[:0], xrayHeader...), n, false, false)
	var errs []error
	if len(e.buf) > maxDatagram {
		errs = append(errs, fmt.Errorf("xray: the document of span %s is %d bytes, over the daemon's datagram", n.span.Name(), len(e.buf)))
	} else {
		errs = append(errs, e.send())
	}
	for _, k := range n.kids {
		errs = append(errs, e.flat(k)...)
	}
	return errs
}

// send writes the datagram in e.buf.
func (e *XRayExporter) send() error {
	_, err := e.conn.Write(e.buf)
	return err
}

// Shutdown closes the socket.
func (e *XRayExporter) Shutdown(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.conn == nil {
		return nil
	}
	err := e.conn.Close()
	e.conn = nil
	return err
}

// Segment is an X-Ray segment or subsegment document, with the fields this service
// writes (https://docs.aws.amazon.com/xray/latest/devguide/xray-api-segmentdocuments.html),
// for reading what the exporter sent.
type Segment struct {
	Type        string            `json:"type,omitempty"`
	Name        string            `json:"name"`
	ID          string            `json:"id"`
	TraceID     string            `json:"trace_id"`
	ParentID    string            `json:"parent_id,omitempty"`
	StartTime   float64           `json:"start_time"`
	EndTime     float64           `json:"end_time"`
	Namespace   string            `json:"namespace,omitempty"`
	Error       bool              `json:"error,omitempty"`
	Fault       bool              `json:"fault,omitempty"`
	Throttle    bool              `json:"throttle,omitempty"`
	Cause       *Cause            `json:"cause,omitempty"`
	HTTP        *SegmentHTTP      `json:"http,omitempty"`
	AWS         map[string]any    `json:"aws,omitempty"`
	SQL         map[string]string `json:"sql,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Metadata    map[string]any    `json:"metadata,omitempty"`
	Subsegments []*Segment        `json:"subsegments,omitempty"`
}

// Cause is a failed span's message.
type Cause struct {
	Exceptions []Exception `json:"exceptions"`
}

// Exception is one error of a Cause.
type Exception struct {
	Message string `json:"message"`
}

// SegmentHTTP is the HTTP request and answer of a segment.
type SegmentHTTP struct {
	Request  map[string]string `json:"request,omitempty"`
	Response map[string]int    `json:"response,omitempty"`
}

// appendSpan appends the X-Ray document of n's span (with its kids nested when
// nest): the route as an annotation (indexed, for filter expressions such as
// annotation.route = "GET /tags"), SQL, AWS and HTTP attributes in X-Ray's own fields,
// the rest as metadata. A nested subsegment takes its trace and parent from the
// document around it. Written by hand: an invocation's export is on its path, and
// encoding/json's reflection (and the maps it needs) cost most of it.
func appendSpan(b []byte, n *node, nested, nest bool) []byte {
	s := n.span
	sc := s.SpanContext()
	b = append(b, '{')
	if p := s.Parent(); p.IsValid() && !nested {
		b = append(b, `"type":"subsegment","parent_id":"`...)
		b = append(b, p.SpanID().String()...)
		b = append(b, `",`...)
	}
	b = append(b, `"name":`...)
	b = appendString(b, xrayName(s.Name()))
	b = append(b, `,"id":"`...)
	b = append(b, sc.SpanID().String()...)
	b = append(b, '"')
	if !nested {
		b = append(b, `,"trace_id":"`...)
		b = append(b, xrayTraceID(sc.TraceID())...)
		b = append(b, '"')
	}
	b = append(b, `,"start_time":`...)
	b = strconv.AppendFloat(b, float64(s.StartTime().UnixMicro())/1e6, 'f', 6, 64)
	b = append(b, `,"end_time":`...)
	b = strconv.AppendFloat(b, float64(s.EndTime().UnixMicro())/1e6, 'f', 6, 64)

	var method, url, route, query, dbType, op, region, requestID, namespace string
	status := 0
	if s.SpanKind() == trace.SpanKindClient {
		namespace = "remote"
	}
	var meta []attribute.KeyValue
	for _, kv := range s.Attributes() {
		v := kv.Value
		switch kv.Key {
		case "http.route":
			route = v.AsString()
		case "http.request.method":
			method = v.AsString()
		case "url.full":
			url, _, _ = strings.Cut(v.AsString(), "?") // the query may carry codes and tokens
		case "http.response.status_code":
			status = int(v.AsInt64())
		case "db.query.text":
			query = v.AsString()
		case "db.system.name", "db.system":
			dbType = v.AsString()
		case "rpc.system":
			if v.AsString() == "aws-api" {
				namespace = "aws"
			}
		case "rpc.method":
			op = v.AsString()
		case "cloud.region":
			region = v.AsString()
		case "aws.request_id":
			requestID = v.AsString()
		default:
			if v.Type() != attribute.INVALID {
				meta = append(meta, kv)
			}
		}
	}
	if namespace != "" {
		b = append(b, `,"namespace":"`...)
		b = append(b, namespace...)
		b = append(b, '"')
	}
	failed := s.Status().Code == codes.Error
	switch {
	case status == 429:
		b = append(b, `,"error":true,"throttle":true`...)
	case status >= 500, status < 400 && failed:
		b = append(b, `,"fault":true`...)
	case status >= 400:
		b = append(b, `,"error":true`...)
	}
	if failed && s.Status().Description != "" {
		b = append(b, `,"cause":{"exceptions":[{"message":`...)
		b = appendString(b, s.Status().Description)
		b = append(b, `}]}`...)
	}
	if method != "" || url != "" || status != 0 {
		b = append(b, `,"http":{`...)
		if method != "" || url != "" {
			b = append(b, `"request":{`...)
			b = appendFields(b, "method", method, "url", url)
			b = append(b, '}')
			if status != 0 {
				b = append(b, ',')
			}
		}
		if status != 0 {
			b = append(b, `"response":{"status":`...)
			b = strconv.AppendInt(b, int64(status), 10)
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	if op != "" || region != "" || requestID != "" {
		b = append(b, `,"aws":{`...)
		b = appendFields(b, "operation", op, "region", region, "request_id", requestID)
		b = append(b, '}')
	}
	if query != "" || dbType != "" {
		b = append(b, `,"sql":{`...)
		b = appendFields(b, "sanitized_query", query, "database_type", dbType)
		b = append(b, '}')
	}
	if route != "" {
		b = append(b, `,"annotations":{"route":`...)
		b = appendString(b, route)
		b = append(b, '}')
	}
	if len(meta) > 0 {
		b = append(b, `,"metadata":{"default":{`...)
		for i, kv := range meta {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, string(kv.Key))
			b = append(b, ':')
			b = appendValue(b, kv.Value)
		}
		b = append(b, "}}"...)
	}
	if nest && len(n.kids) > 0 {
		b = append(b, `,"subsegments":[`...)
		for i, k := range n.kids {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendSpan(b, k, true, true)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendFields appends the non-empty ones of key, value pairs as object members.
func appendFields(b []byte, kv ...string) []byte {
	first := true
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, kv[i])
		b = append(b, ':')
		b = appendString(b, kv[i+1])
	}
	return b
}

// appendValue appends an attribute's value: strings, integers, floats and booleans as
// themselves, slices through encoding/json.
func appendValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.STRING:
		return appendString(b, v.AsString())
	case attribute.INT64:
		return strconv.AppendInt(b, v.AsInt64(), 10)
	case attribute.BOOL:
		return strconv.AppendBool(b, v.AsBool())
	case attribute.FLOAT64:
		if f := v.AsFloat64(); !math.IsInf(f, 0) && !math.IsNaN(f) {
			return strconv.AppendFloat(b, f, 'g', -1, 64)
		}
		return append(b, "null"...)
	}
	j, err := json.Marshal(v.AsInterface())
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, j...)
}

// xrayName keeps the characters X-Ray accepts in a name (letters, digits, spaces and
// _ . : / % & # = + \ - @), with a route's {param} written :param, within 200 bytes
// (cut between characters). A name X-Ray takes as it is, most of them ("GET /tags",
// "query postgres.DB.Tags"), is returned as it is, without a copy.
func xrayName(name string) string {
	if len(name) <= maxXRayName && strings.IndexFunc(name, func(r rune) bool { return !xrayAccepts(r) }) < 0 {
		return name
	}
	b := make([]byte, 0, len(name))
	for _, r := range name {
		switch {
		case r == '{':
			r = ':'
		case r == '}':
			continue
		case !xrayAccepts(r):
			r = '_'
		}
		if len(b)+utf8.RuneLen(r) > maxXRayName {
			break
		}
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}

// maxXRayName is the longest name X-Ray takes, in bytes.
const maxXRayName = 200

// xrayAccepts reports whether X-Ray takes r in a name as it is.
func xrayAccepts(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r > 127 && r != utf8.RuneError ||
		strings.ContainsRune(" _.:/%&#=+\\-@", r)
}
