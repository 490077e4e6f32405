package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// TestDebugServer: the runtime figures make soak reads are served on loopback only,
// with the goroutines, the live heap, the collector's CPU time and expvar's memstats.
func TestDebugServer(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.1:0", "localhost:0", ":0"} {
		if _, err := serveDebug(context.Background(), addr, io.Discard); err == nil || !strings.Contains(err.Error(), "loopback") && !strings.Contains(err.Error(), "-debug-addr") {
			t.Errorf("serveDebug(%q) = %v, want a refusal", addr, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out strings.Builder
	url, err := serveDebug(ctx, "127.0.0.1:0", &out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), url) {
		t.Errorf("output %q does not name %s", out.String(), url)
	}
	runtime.GC() // the runtime accounts the collector's CPU time at a cycle's end
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var vars struct {
		Goroutines    int     `json:"goroutines"`
		HeapLiveBytes uint64  `json:"heap_live_bytes"`
		GCCPUSeconds  float64 `json:"gc_cpu_seconds"`
		Memstats      struct {
			HeapInuse   uint64
			HeapObjects uint64
		} `json:"memstats"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&vars); err != nil {
		t.Fatal(err)
	}
	if vars.Goroutines <= 0 || vars.Memstats.HeapInuse == 0 || vars.Memstats.HeapObjects == 0 || vars.GCCPUSeconds <= 0 {
		t.Errorf("vars %+v: want goroutines, heap in use, heap objects and the collector's CPU time", vars)
	}
	prof, err := http.Get(strings.TrimSuffix(url, "/vars") + "/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(prof.Body)
	prof.Body.Close()
	if prof.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), "goroutine profile: total ") {
		t.Errorf("goroutine profile: %d %.60s", prof.StatusCode, body)
	}
}
