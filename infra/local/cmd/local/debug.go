package main

import (
	"context"
	"errors"
	"expvar"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"runtime/metrics"
	"time"
)

// The process's figures beside expvar's memstats and cmdline, for make soak and make
// bench-path, which read them from outside the process: the goroutines, the heap the
// last collection left live (less noisy than memstats' HeapInuse, which follows the
// collector's cycle), and the CPU time the collector has spent (the runtime's own
// account, which memstats' GCCPUFraction gives only as a share of the process's life).
func init() {
	expvar.Publish("goroutines", expvar.Func(func() any { return runtime.NumGoroutine() }))
	expvar.Publish("heap_live_bytes", expvar.Func(func() any {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		if s[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[0].Value.Uint64()
	}))
	expvar.Publish("gc_cpu_seconds", expvar.Func(func() any {
		s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
		metrics.Read(s)
		if s[0].Value.Kind() != metrics.KindFloat64 {
			return 0.0
		}
		return s[0].Value.Float64()
	}))
}

// serveDebug serves, on addr, expvar's variables at /debug/vars and net/http/pprof's
// profiles at /debug/pprof/, until ctx ends. addr must be a loopback address: the
// profiles show the process's memory, which no other host may read. The Lambda
// functions never link this (only the local server does); it returns the URL of the
// variables.
func serveDebug(ctx context.Context, addr string, out io.Writer) (string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("-debug-addr: %w", err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return "", fmt.Errorf("-debug-addr %s: a loopback IP address only (such as 127.0.0.1:0)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /debug/vars", expvar.Handler())
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(out, "debug server:", err)
		}
	}()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	url := "http://" + ln.Addr().String() + "/debug/vars"
	fmt.Fprintf(out, "debug: %s (profiles at /debug/pprof/)\n", url)
	return url, nil
}
