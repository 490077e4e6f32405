// Package smoke runs the real bootstrap binaries against an implementation of the
// Lambda Runtime API, as Lambda's runtime calls them, and measures them. Its tests also
// run a function under AWS's Runtime Interface Emulator (emulator_test.go); this API
// stays for what the emulator does not do: tell when a process asked for its first
// invocation (the end of its init, which the cold-start benchmark subtracts), and send
// Lambda's trace header to the runtime.
package smoke

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Result is what the function answered for one invocation.
type Result struct {
	RequestID string
	Body      []byte // the /response payload, or the /error payload
	Err       bool   // the function reported an invocation error
	// Asked is when the function asked for this invocation (its /next arrived: for the
	// first, the end of its init); At is when its answer arrived.
	Asked, At time.Time
}

// RuntimeAPI is a small implementation of the Lambda Runtime API
// (/2018-06-01/runtime/invocation/next, /{id}/response, /{id}/error, /init/error),
// serving queued events one at a time over loopback.
type RuntimeAPI struct {
	Addr string // host:port for AWS_LAMBDA_RUNTIME_API
	// TraceHeader is the Lambda-Runtime-Trace-Id of every invocation: X-Ray's header
	// of the trace Lambda began, by default a sampled one, so that every invocation
	// records and sends its spans (the costliest case). The Runtime Interface Emulator
	// sends none, so the tests of a continued trace use this API.
	TraceHeader string

	srv     *http.Server
	events  chan invocation
	results chan Result
	initErr chan []byte

	mu      sync.Mutex
	pending map[string]time.Time // request id -> when /next delivered it (zero: queued)
	seq     int
}

type invocation struct {
	id    string
	event []byte
}

// NewRuntimeAPI listens on a loopback port.
func NewRuntimeAPI() (*RuntimeAPI, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	api := &RuntimeAPI{
		Addr:    ln.Addr().String(),
		events:  make(chan invocation, 64),
		results: make(chan Result, 64),
		initErr: make(chan []byte, 1),
		pending: map[string]time.Time{},

		TraceHeader: "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", api.next)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", api.done(false))
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", api.done(true))
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		select {
		case api.initErr <- b:
		default:
		}
		w.WriteHeader(http.StatusAccepted)
	})
	api.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = api.srv.Serve(ln) }()
	return api, nil
}

// Close stops the server.
func (api *RuntimeAPI) Close() { _ = api.srv.Close() }

// Enqueue queues an event and returns its request id.
func (api *RuntimeAPI) Enqueue(event []byte) string {
	api.mu.Lock()
	api.seq++
	id := fmt.Sprintf("smoke-%04d", api.seq)
	api.pending[id] = time.Time{}
	api.mu.Unlock()
	api.events <- invocation{id: id, event: event}
	return id
}

// Wait returns the next result, or an error on timeout or an init error.
func (api *RuntimeAPI) Wait(timeout time.Duration) (Result, error) {
	select {
	case r := <-api.results:
		return r, nil
	case b := <-api.initErr:
		return Result{}, fmt.Errorf("init error: %s", b)
	case <-time.After(timeout):
		return Result{}, fmt.Errorf("no response within %s", timeout)
	}
}

func (api *RuntimeAPI) next(w http.ResponseWriter, r *http.Request) {
	asked := time.Now()
	var inv invocation
	select {
	case inv = <-api.events:
	case <-r.Context().Done():
		return
	}
	api.mu.Lock()
	api.pending[inv.id] = asked
	api.mu.Unlock()
	h := w.Header()
	h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
	h.Set("Lambda-Runtime-Deadline-Ms", fmt.Sprint(time.Now().Add(30*time.Second).UnixMilli()))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:eu-central-1:123456789012:function:smoke")
	h.Set("Lambda-Runtime-Trace-Id", api.TraceHeader)
	h.Set("Content-Type", "application/json")
	_, _ = w.Write(inv.event)
}

func (api *RuntimeAPI) done(isErr bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		b, _ := io.ReadAll(r.Body)
		api.mu.Lock()
		asked, known := api.pending[id]
		delete(api.pending, id)
		api.mu.Unlock()
		if !known {
			http.Error(w, `{"errorMessage":"unknown request id"}`, http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		api.results <- Result{RequestID: id, Body: b, Err: isErr, Asked: asked, At: time.Now()}
	}
}

// Response is the API Gateway v2 response fields the smoke test reads.
type Response struct {
	StatusCode      int               `json:"statusCode"`
	Headers         map[string]string `json:"headers"`
	Body            string            `json:"body"`
	IsBase64Encoded bool              `json:"isBase64Encoded"`
	Cookies         []string          `json:"cookies"`
}

// Decode parses a /response payload.
func (r Result) Decode() (Response, error) {
	var resp Response
	if r.Err {
		return resp, fmt.Errorf("invocation error: %s", strings.TrimSpace(string(r.Body)))
	}
	err := json.Unmarshal(r.Body, &resp)
	return resp, err
}
