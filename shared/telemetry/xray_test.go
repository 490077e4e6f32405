package telemetry

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

var (
	testTrace  = trace.TraceID{0x67, 0x89, 0xab, 0xcd, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	lambdaSpan = trace.SpanID{9, 9, 9, 9, 9, 9, 9, 9}
)

func stub(name string, id, parent byte, kind trace.SpanKind, status codes.Code, attrs ...attribute.KeyValue) tracetest.SpanStub {
	p := trace.NewSpanContext(trace.SpanContextConfig{TraceID: testTrace, SpanID: trace.SpanID{parent}, Remote: false})
	if parent == 0 {
		p = trace.NewSpanContext(trace.SpanContextConfig{TraceID: testTrace, SpanID: lambdaSpan, Remote: true})
	}
	return tracetest.SpanStub{
		Name:        name,
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: testTrace, SpanID: trace.SpanID{id}, TraceFlags: trace.FlagsSampled}),
		Parent:      p, SpanKind: kind, Attributes: attrs,
		StartTime: time.Unix(1700000000, 0), EndTime: time.Unix(1700000000, 5e6),
		Status: sdktrace.Status{Code: status, Description: map[codes.Code]string{codes.Error: "boom"}[status]},
	}
}

// TestSegment: a span's X-Ray document, field by field.
func TestSegment(t *testing.T) {
	for _, tc := range []struct {
		name string
		span tracetest.SpanStub
		want string // fragments of the document's JSON
	}{
		{"route", stub("GET /tags/id/{id}", 2, 1, trace.SpanKindServer, codes.Unset,
			attribute.String("http.route", "GET /tags/id/{id}"), attribute.Int("http.response.status_code", 404)),
			`"name":"GET /tags/id/:id"|"annotations":{"route":"GET /tags/id/{id}"}|"error":true|"response":{"status":404}|"type":"subsegment"|"parent_id":"0100000000000000"|"trace_id":"1-6789abcd-0102030405060708090a0b0c"`},
		{"statement", stub("query postgres.DB.Tags", 3, 2, trace.SpanKindClient, codes.Error,
			attribute.String("db.system.name", "postgresql"), attribute.String("db.query.text", "SELECT 1 WHERE $1"),
			attribute.Int("code.line.number", 16)),
			`"metadata":{"default":{"code.line.number":16}}|"namespace":"remote"|"database_type":"postgresql"|"sanitized_query":"SELECT 1 WHERE $1"|"fault":true|"cause":{"exceptions":[{"message":"boom"}]}`},
		{"AWS call", stub("DynamoDB.UpdateItem", 4, 2, trace.SpanKindClient, codes.Unset,
			attribute.String("rpc.system", "aws-api"), attribute.String("rpc.method", "UpdateItem"),
			attribute.String("aws.request_id", "R1"), attribute.Int("http.response.status_code", 429)),
			`"namespace":"aws"|"operation":"UpdateItem"|"request_id":"R1"|"throttle":true`},
		{"provider call, its query kept out", stub("POST oauth2.googleapis.com", 5, 2, trace.SpanKindClient, codes.Unset,
			attribute.String("url.full", "https://oauth2.googleapis.com/token?code=secret")),
			`"url":"https://oauth2.googleapis.com/token"`},
		{"invocation under Lambda's segment", stub("tags", 1, 0, trace.SpanKindServer, codes.Unset),
			`"parent_id":"0909090909090909"|"type":"subsegment"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := appendSpan(nil, &node{span: tc.span.Snapshot()}, false, true)
			var back Segment
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("not JSON: %v: %s", err, b)
			}
			for _, w := range strings.Split(tc.want, "|") {
				if !strings.Contains(string(b), w) {
					t.Errorf("no %s in %s", w, b)
				}
			}
			if strings.Contains(string(b), "secret") {
				t.Errorf("the query string went out: %s", b)
			}
		})
	}
}

// TestExportDatagrams: an invocation's spans are one datagram, nested; a tree over the
// daemon's datagram is sent span by span, each naming its parent.
func TestExportDatagrams(t *testing.T) {
	daemon, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer daemon.Close()
	e := NewXRayExporter("tcp:127.0.0.1:1 udp:" + daemon.LocalAddr().String())
	defer e.Shutdown(context.Background())
	long := strings.Repeat("x", 40<<10) // two of them are over a datagram, one is not
	for _, tc := range []struct {
		name      string
		query     string
		datagrams int
	}{
		{"small", "SELECT 1", 1},
		{"over 64 KB", long, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spans := tracetest.SpanStubs{
				stub("tags", 1, 0, trace.SpanKindServer, codes.Unset),
				stub("GET /tags", 2, 1, trace.SpanKindServer, codes.Unset),
				stub("query a", 3, 2, trace.SpanKindClient, codes.Unset, attribute.String("db.query.text", tc.query)),
				stub("query b", 4, 2, trace.SpanKindClient, codes.Unset, attribute.String("db.query.text", tc.query)),
			}.Snapshots()
			if err := e.ExportSpans(context.Background(), spans); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 64<<10)
			ids := 0
			for n := 0; n < tc.datagrams; n++ {
				_ = daemon.SetReadDeadline(time.Now().Add(2 * time.Second))
				m, _, err := daemon.ReadFrom(buf)
				if err != nil {
					t.Fatalf("datagram %d: %v", n, err)
				}
				_, doc, _ := strings.Cut(string(buf[:m]), "\n")
				ids += strings.Count(doc, `"id":`)
				var s Segment
				if err := json.Unmarshal([]byte(doc), &s); err != nil || s.TraceID == "" {
					t.Fatalf("document %q: %v", doc, err)
				}
			}
			if ids != 4 {
				t.Errorf("%d spans arrived, want 4", ids)
			}
			_ = daemon.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			if _, _, err := daemon.ReadFrom(buf); err == nil {
				t.Errorf("more than %d datagrams", tc.datagrams)
			}
		})
	}
}

// TestXRayName: a name X-Ray takes is kept as it is, without a copy; a route's {param}
// becomes :param, a character X-Ray refuses becomes _, and a long name is cut at 200
// bytes between characters.
func TestXRayName(t *testing.T) {
	long := strings.Repeat("a", 199) + "é" // 201 bytes: the é does not fit
	tests := []struct{ name, in, want string }{
		{"a route", "GET /tags", "GET /tags"},
		{"a statement", "query postgres.DB.Tags", "query postgres.DB.Tags"},
		{"every accepted sign", `a _.:/%&#=+\-@ 9`, `a _.:/%&#=+\-@ 9`},
		{"a route's parameters", "GET /user/avatar/{id}/{res}", "GET /user/avatar/:id/:res"},
		{"refused characters", "a(b)*c!d,e", "a_b__c_d_e"},
		{"letters beyond ASCII", "café", "café"},
		{"bytes that are no UTF-8", "a\xffb", "a_b"},
		{"200 bytes", strings.Repeat("a", 200), strings.Repeat("a", 200)},
		{"cut at 200 bytes", strings.Repeat("a", 250), strings.Repeat("a", 200)},
		{"cut between characters", long, strings.Repeat("a", 199)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := xrayName(tt.in); got != tt.want {
				t.Errorf("xrayName(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	if n := testing.AllocsPerRun(100, func() { _ = xrayName("GET /tags") }); n != 0 {
		t.Errorf("an accepted name: %v allocations, want none", n)
	}
}
