package smoke_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediacatalog/service/infra/tests/smoke"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/telemetry"
)

// The request id of the invocation, and the trace Lambda began for it.
const (
	emuTraceRoot   = "1-6789abcd-0123456789abcdef01234567"
	emuTraceParent = "1a2b3c4d5e6f7081"
	emuRequestID   = "c6af9ac6-7b61-11e6-9a41-93e812345678"
)

// TestEmulator runs the tags function's real bootstrap (built as make build does, for
// this machine's architecture) under AWS's Runtime Interface Emulator, the Lambda
// runtime of sam local and the base images, with GET /tags's API Gateway event and a
// UDP listener standing in for the X-Ray daemon. It holds what arrives to what an
// operator follows: the spans (the invocation, the route under it, the statement that
// read the database with its SQL and the line that sent it), one EMF document on
// stdout naming the route with the request's ids, and JSON log lines carrying the
// request id and the trace id, at the stricter of LOG_LEVEL and the level
// AWS_LAMBDA_LOG_LEVEL (LoggingConfig) sets. The emulator passes no trace header to the runtime (its tracer is a
// no-op), so the function begins the trace; the continuation of Lambda's trace is
// held through the smoke Runtime API, which sends one.
func TestEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the emulator and a function")
	}
	dir := t.TempDir()
	var rie, bin string
	var rieErr, binErr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); rie, rieErr = buildEmulator(dir) }()
	go func() { defer wg.Done(); bin, binErr = build(dir, "bootstrap", "./functions/tags", runtime.GOARCH) }()
	wg.Wait()
	if rieErr != nil || binErr != nil {
		t.Fatal(rieErr, binErr)
	}
	env, _ := stackEnv(t)
	daemon, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer daemon.Close()
	// The function's name as template.yaml gives it: the stack's name, then the group's.
	const lambdaName = "media-catalog-dev-tags"
	env = append(env, "AWS_XRAY_DAEMON_ADDRESS="+daemon.LocalAddr().String(), "AWS_LAMBDA_FUNCTION_NAME="+lambdaName,
		"LOG_LEVEL=debug", "AWS_LAMBDA_LOG_LEVEL=INFO", "AWS_LAMBDA_LOG_FORMAT=JSON")

	invokeAddr, apiAddr := freeAddr(t), freeAddr(t)
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", invokeAddr, "--runtime-api-address", apiAddr, bin)
	cmd.Env = env
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	status, body := invokeEmulator(t, invokeAddr, emuRequestID, mustEvent(t, "tags/get-tags.json"))
	if status != http.StatusOK || !strings.Contains(body, `"statusCode":200`) {
		t.Fatalf("invocation: %d %s\n%s", status, body, out.String())
	}
	docs, datagrams := readSegments(t, daemon)
	stdout := out.String()
	if datagrams != 1 {
		t.Errorf("the invocation's spans came in %d datagrams, want one", datagrams)
	}
	t.Logf("spans (X-Ray documents) that arrived:\n%s", docsText(docs))
	inv := find(docs, func(d telemetry.Segment) bool { return d.ParentID == "" })
	if len(inv) != 1 || inv[0].Name != "tags" {
		t.Fatalf("want one invocation segment, got %+v", inv)
	}
	traceID := inv[0].TraceID

	t.Run("spans", func(t *testing.T) {
		for _, d := range docs {
			if d.TraceID != traceID {
				t.Errorf("%s: trace %s, want the invocation's %s", d.Name, d.TraceID, traceID)
			}
		}
		route := find(docs, func(d telemetry.Segment) bool { return d.ParentID == inv[0].ID })
		if len(route) != 1 || route[0].Name != "GET /tags" || route[0].Annotations["route"] != "GET /tags" ||
			route[0].HTTP == nil || route[0].HTTP.Response["status"] != 200 {
			t.Fatalf("want the route GET /tags with its status under the invocation, got %+v", route)
		}
		stmts := find(docs, func(d telemetry.Segment) bool { return d.ParentID == route[0].ID && d.SQL != nil })
		if len(stmts) != 1 {
			t.Fatalf("want one statement under the route, got %+v", stmts)
		}
		s := stmts[0]
		meta, _ := s.Metadata["default"].(map[string]any)
		if s.Name != "query postgres.DB.Tags" || s.Namespace != "remote" || !strings.Contains(s.SQL["sanitized_query"], "FROM tags") ||
			meta["code.file.path"] != "shared/postgres/tags.go" {
			t.Errorf("statement: %+v", s)
		}
	})

	t.Run("metrics", func(t *testing.T) {
		var emf []map[string]any
		for line := range strings.Lines(stdout) {
			if strings.Contains(line, `"_aws"`) {
				var doc map[string]any
				if err := json.Unmarshal([]byte(line), &doc); err != nil {
					t.Fatalf("EMF line is not JSON: %q", line)
				}
				emf = append(emf, doc)
			}
		}
		if len(emf) != 1 {
			t.Fatalf("want one EMF document, got %d:\n%s", len(emf), stdout)
		}
		t.Logf("EMF document:\n%s", mustJSON(emf[0]))
		d := emf[0]
		// The metrics' function is the Lambda's own name, which carries its stack's.
		if d[telemetry.DimFunction] != lambdaName || d["Route"] != "GET /tags" || d["Method"] != "GET" || d["StatusClass"] != "2xx" ||
			d["requestId"] != emuRequestID || d["traceId"] != traceID || d["Statements"] != 1.0 {
			t.Errorf("EMF document: %v", d)
		}
	})

	t.Run("logs", func(t *testing.T) {
		var request map[string]any
		for line := range strings.Lines(stdout) {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "request" {
				request = rec
			}
		}
		if request == nil {
			t.Fatalf("no request line at AWS_LAMBDA_LOG_LEVEL=INFO:\n%s", stdout)
		}
		t.Logf("request line: %s", mustJSON(request))
		if strings.Contains(stdout, `"level":"DEBUG"`) {
			t.Errorf("DEBUG lines below AWS_LAMBDA_LOG_LEVEL=INFO:\n%s", stdout)
		}
		if request["request_id"] != emuRequestID || request["trace_id"] != traceID || request["level"] != "INFO" {
			t.Errorf("request line: %v", request)
		}
	})

	t.Run("continues Lambda's trace", func(t *testing.T) {
		api, err := smoke.NewRuntimeAPI()
		if err != nil {
			t.Fatal(err)
		}
		defer api.Close()
		api.TraceHeader = "Root=" + emuTraceRoot + ";Parent=" + emuTraceParent + ";Sampled=1"
		api.Enqueue(mustEvent(t, "tags/get-tags.json"))
		cmd := exec.Command(bin)
		cmd.Env = append(append([]string{}, env...), "AWS_LAMBDA_RUNTIME_API="+api.Addr)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		if _, err := api.Wait(20 * time.Second); err != nil {
			t.Fatal(err)
		}
		docs, _ := readSegments(t, daemon)
		inv := find(docs, func(d telemetry.Segment) bool { return d.ParentID == emuTraceParent })
		if len(inv) != 1 || inv[0].Type != "subsegment" || inv[0].Name != "tags" {
			t.Fatalf("want the invocation as a subsegment of Lambda's segment %s, got %s", emuTraceParent, docsText(docs))
		}
		for _, d := range docs {
			if d.TraceID != emuTraceRoot {
				t.Errorf("%s: trace %s, want Lambda's %s", d.Name, d.TraceID, emuTraceRoot)
			}
		}
	})
}

// buildEmulator builds the Runtime Interface Emulator at the version go.mod holds (a
// tool dependency), into dir.
func buildEmulator(dir string) (string, error) {
	out := filepath.Join(dir, "aws-lambda-rie")
	cmd := exec.Command("go", "build", "-o", out, "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie")
	cmd.Dir = testenv.RepoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the emulator: %v\n%s", err, b)
	}
	return out, nil
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// invokeEmulator sends one event to the emulator's invoke endpoint, waiting for it to
// listen, as Lambda's front end would, with the request id.
func invokeEmulator(t *testing.T, addr, requestID string, event []byte) (int, string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/2015-03-31/functions/function/invocations", bytes.NewReader(event))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Amzn-RequestId", requestID)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			if time.Now().After(deadline) {
				t.Fatalf("the emulator never listened: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
			continue
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, b.String()
	}
}

// readSegments reads the daemon's datagrams, each the protocol's header line and one
// segment document, and returns the segments with the nested ones as the separate
// subsegments they stand for, and how many datagrams came. The function flushes its
// spans before it answers, so they are all here when the answer is.
func readSegments(t *testing.T, conn net.PacketConn) (docs []telemetry.Segment, datagrams int) {
	t.Helper()
	var add func(s telemetry.Segment, traceID, parent string)
	add = func(s telemetry.Segment, traceID, parent string) {
		if parent != "" {
			s.Type, s.TraceID, s.ParentID = "subsegment", traceID, parent
		}
		nested := s.Subsegments
		s.Subsegments = nil
		docs = append(docs, s)
		for _, c := range nested {
			add(*c, s.TraceID, s.ID)
		}
	}
	buf := make([]byte, 64<<10)
	for {
		_ = conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		n, _, err := conn.ReadFrom(buf)
		if err != nil {
			return docs, datagrams
		}
		datagrams++
		header, doc, ok := bytes.Cut(buf[:n], []byte("\n"))
		if !ok || string(header) != `{"format": "json", "version": 1}` {
			t.Fatalf("not a daemon datagram: %q", buf[:n])
		}
		var s telemetry.Segment
		if err := json.Unmarshal(doc, &s); err != nil {
			t.Fatalf("segment document: %v: %s", err, doc)
		}
		add(s, "", "")
	}
}

func find(docs []telemetry.Segment, f func(telemetry.Segment) bool) []telemetry.Segment {
	var out []telemetry.Segment
	for _, d := range docs {
		if f(d) {
			out = append(out, d)
		}
	}
	return out
}

func docsText(docs []telemetry.Segment) string {
	var b strings.Builder
	for _, d := range docs {
		fmt.Fprintf(&b, "%s\n", mustJSON(d))
	}
	return b.String()
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// emulate runs bin under the emulator with each event in turn and returns the
// function's answers, and the time its first took: the emulator starts the process at
// the first invocation, so that is the function's init and one request.
func emulate(t *testing.T, rie, bin string, env []string, events [][]byte) ([]smoke.Response, time.Duration) {
	t.Helper()
	invokeAddr, apiAddr := freeAddr(t), freeAddr(t)
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", invokeAddr, "--runtime-api-address", apiAddr, bin)
	cmd.Env = env
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	waitListening(t, invokeAddr)
	var resps []smoke.Response
	var first time.Duration
	for i, ev := range events {
		start := time.Now()
		status, body := invokeEmulator(t, invokeAddr, fmt.Sprintf("smoke-%04d", i), ev)
		if i == 0 {
			first = time.Since(start)
		}
		var r smoke.Response
		if err := json.Unmarshal([]byte(body), &r); status != http.StatusOK || err != nil || r.StatusCode == 0 {
			t.Fatalf("%s: event %d: %d %s\n%s", filepath.Base(bin), i, status, body, out.String())
		}
		resps = append(resps, r)
	}
	return resps, first
}

// waitListening waits for the emulator's invoke endpoint.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the emulator never listened: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
