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

// maxDatagram is the largest document the daemon takes in one datagram.
const maxDatagram = 64<<10 - len(xrayHeader)

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
	segs := make(map[trace.SpanID]*Segment, len(spans))
	for _, s := range spans {
		seg := segment(s)
		segs[s.SpanContext().SpanID()] = &seg
	}
	var roots []*Segment
	for _, s := range spans {
		seg := segs[s.SpanContext().SpanID()]
		if p, ok := segs[s.Parent().SpanID()]; ok && s.Parent().IsValid() {
			p.Subsegments = append(p.Subsegments, seg)
			continue
		}
		roots = append(roots, seg)
	}
	var errs []error
	for _, root := range roots {
		nest(root)
		e.buf = appendSegment(append(e.buf[:0], xrayHeader...), root)
		if len(e.buf) > maxDatagram+len(xrayHeader) {
			errs = append(errs, e.flat(root)...)
			continue
		}
		errs = append(errs, e.send())
	}
	return errors.Join(errs...)
}

// nest clears the fields a nested subsegment takes from its parent.
func nest(s *Segment) {
	for _, c := range s.Subsegments {
		c.Type, c.TraceID, c.ParentID = "", "", ""
		nest(c)
	}
}

// flat sends each segment of a tree as a document of its own.
func (e *XRayExporter) flat(root *Segment) []error {
	var errs []error
	var walk func(s *Segment, traceID, parent string)
	walk = func(s *Segment, traceID, parent string) {
		children := s.Subsegments
		s.Subsegments = nil
		if parent != "" {
			s.Type, s.TraceID, s.ParentID = "subsegment", traceID, parent
		}
		e.buf = appendSegment(append(e.buf[:0], xrayHeader...), s)
		if len(e.buf) > maxDatagram+len(xrayHeader) {
			errs = append(errs, fmt.Errorf("xray: the document of span %s is %d bytes, over the daemon's datagram", s.Name, len(e.buf)))
		} else {
			errs = append(errs, e.send())
		}
		for _, c := range children {
			walk(c, s.TraceID, s.ID)
		}
	}
	walk(root, root.TraceID, root.ParentID)
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
// sets (https://docs.aws.amazon.com/xray/latest/devguide/xray-api-segmentdocuments.html).
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

// segment maps a span to its X-Ray document: the route as an annotation (indexed, for
// filter expressions such as annotation.route = "GET /tags"), SQL, AWS and HTTP
// attributes in X-Ray's own fields, the rest as metadata.
func segment(s sdktrace.ReadOnlySpan) Segment {
	sc := s.SpanContext()
	seg := Segment{
		Name:      xrayName(s.Name()),
		ID:        sc.SpanID().String(),
		TraceID:   xrayTraceID(sc.TraceID()),
		StartTime: float64(s.StartTime().UnixMicro()) / 1e6,
		EndTime:   float64(s.EndTime().UnixMicro()) / 1e6,
	}
	if p := s.Parent(); p.IsValid() {
		seg.Type, seg.ParentID = "subsegment", p.SpanID().String()
	}
	if s.SpanKind() == trace.SpanKindClient {
		seg.Namespace = "remote"
	}
	status := 0
	meta := map[string]any{}
	for _, kv := range s.Attributes() {
		k, v := string(kv.Key), kv.Value
		switch k {
		case "http.route":
			seg.annotate("route", v.AsString())
		case "http.request.method":
			seg.http().Request["method"] = v.AsString()
		case "url.full":
			// Without the query: it may carry codes and tokens.
			u, _, _ := strings.Cut(v.AsString(), "?")
			seg.http().Request["url"] = u
		case "http.response.status_code":
			status = int(v.AsInt64())
			seg.http().Response = map[string]int{"status": status}
		case "db.query.text":
			seg.sql()["sanitized_query"] = v.AsString()
		case "db.system.name", "db.system":
			seg.sql()["database_type"] = v.AsString()
		case "rpc.system":
			if v.AsString() == "aws-api" {
				seg.Namespace = "aws"
			}
		case "rpc.method":
			seg.aws()["operation"] = v.AsString()
		case "cloud.region":
			seg.aws()["region"] = v.AsString()
		case "aws.request_id":
			seg.aws()["request_id"] = v.AsString()
		default:
			if v.Type() != attribute.INVALID {
				meta[k] = v.AsInterface()
			}
		}
	}
	if len(meta) > 0 {
		seg.Metadata = map[string]any{"default": meta}
	}
	switch {
	case status == 429:
		seg.Error, seg.Throttle = true, true
	case status >= 500:
		seg.Fault = true
	case status >= 400:
		seg.Error = true
	case s.Status().Code == codes.Error:
		seg.Fault = true
	}
	if s.Status().Code == codes.Error && s.Status().Description != "" {
		seg.Cause = &Cause{Exceptions: []Exception{{Message: s.Status().Description}}}
	}
	return seg
}

func (s *Segment) annotate(k, v string) {
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations[k] = v
}

func (s *Segment) http() *SegmentHTTP {
	if s.HTTP == nil {
		s.HTTP = &SegmentHTTP{Request: map[string]string{}}
	}
	return s.HTTP
}

func (s *Segment) sql() map[string]string {
	if s.SQL == nil {
		s.SQL = map[string]string{}
	}
	return s.SQL
}

func (s *Segment) aws() map[string]any {
	if s.AWS == nil {
		s.AWS = map[string]any{}
	}
	return s.AWS
}

// xrayName keeps the characters X-Ray accepts in a name (letters, digits, spaces and
// _ . : / % & # = + \ - @), with a route's {param} written :param, within 200 bytes.
func xrayName(name string) string {
	b := make([]rune, 0, len(name))
	for _, r := range name {
		switch {
		case r == '{':
			b = append(b, ':')
		case r == '}':
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r > 127,
			strings.ContainsRune(" _.:/%&#=+\\-@", r):
			b = append(b, r)
		default:
			b = append(b, '_')
		}
	}
	s := string(b)
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// appendSegment appends s as JSON, as json.Marshal would write it (the tests decode it
// with encoding/json): written by hand because an invocation's export is on its path,
// and encoding/json's reflection cost most of it.
func appendSegment(b []byte, s *Segment) []byte {
	b = append(b, '{')
	if s.Type != "" {
		b = append(b, `"type":`...)
		b = appendString(b, s.Type)
		b = append(b, ',')
	}
	b = append(b, `"name":`...)
	b = appendString(b, s.Name)
	b = append(b, `,"id":`...)
	b = appendString(b, s.ID)
	if s.TraceID != "" {
		b = append(b, `,"trace_id":`...)
		b = appendString(b, s.TraceID)
	}
	if s.ParentID != "" {
		b = append(b, `,"parent_id":`...)
		b = appendString(b, s.ParentID)
	}
	b = append(b, `,"start_time":`...)
	b = strconv.AppendFloat(b, s.StartTime, 'f', 6, 64)
	b = append(b, `,"end_time":`...)
	b = strconv.AppendFloat(b, s.EndTime, 'f', 6, 64)
	if s.Namespace != "" {
		b = append(b, `,"namespace":`...)
		b = appendString(b, s.Namespace)
	}
	for _, f := range []struct {
		set  bool
		name string
	}{{s.Error, `,"error":true`}, {s.Fault, `,"fault":true`}, {s.Throttle, `,"throttle":true`}} {
		if f.set {
			b = append(b, f.name...)
		}
	}
	if s.Cause != nil {
		b = append(b, `,"cause":{"exceptions":[`...)
		for i, e := range s.Cause.Exceptions {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"message":`...)
			b = appendString(b, e.Message)
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	if s.HTTP != nil {
		b = append(b, `,"http":{`...)
		if len(s.HTTP.Request) > 0 {
			b = append(b, `"request":`...)
			b = appendStrings(b, s.HTTP.Request)
			if len(s.HTTP.Response) > 0 {
				b = append(b, ',')
			}
		}
		if len(s.HTTP.Response) > 0 {
			b = append(b, `"response":{"status":`...)
			b = strconv.AppendInt(b, int64(s.HTTP.Response["status"]), 10)
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	if len(s.AWS) > 0 {
		b = append(b, `,"aws":`...)
		b = appendAny(b, s.AWS)
	}
	if len(s.SQL) > 0 {
		b = append(b, `,"sql":`...)
		b = appendStrings(b, s.SQL)
	}
	if len(s.Annotations) > 0 {
		b = append(b, `,"annotations":`...)
		b = appendStrings(b, s.Annotations)
	}
	if len(s.Metadata) > 0 {
		b = append(b, `,"metadata":`...)
		b = appendAny(b, s.Metadata)
	}
	if len(s.Subsegments) > 0 {
		b = append(b, `,"subsegments":[`...)
		for i, c := range s.Subsegments {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendSegment(b, c)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func appendStrings(b []byte, m map[string]string) []byte {
	b = append(b, '{')
	first := true
	for k, v := range m {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, v)
	}
	return append(b, '}')
}

// appendAny writes the attribute values a segment holds: strings, integers, floats,
// booleans and maps of them; anything else through encoding/json.
func appendAny(b []byte, v any) []byte {
	switch v := v.(type) {
	case string:
		return appendString(b, v)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case bool:
		return strconv.AppendBool(b, v)
	case float64:
		if !math.IsInf(v, 0) && !math.IsNaN(v) {
			return strconv.AppendFloat(b, v, 'g', -1, 64)
		}
		return append(b, "null"...)
	case map[string]any:
		b = append(b, '{')
		first := true
		for k, x := range v {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendString(b, k)
			b = append(b, ':')
			b = appendAny(b, x)
		}
		return append(b, '}')
	}
	j, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, j...)
}
