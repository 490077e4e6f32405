// Package lambdahttp is the entry point every function shares: the same http.Handler
// runs under Lambda, wrapped by aws-lambda-go-api-proxy's API Gateway v2 adapter, and
// as a plain net/http server everywhere else.
package lambdahttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// UnderLambda reports whether the process runs inside a Lambda execution environment.
func UnderLambda(getenv func(string) string) bool {
	return getenv("AWS_LAMBDA_RUNTIME_API") != ""
}

// Handler adapts h to the Lambda handler signature for API Gateway HTTP API (payload
// format 2.0) events.
func Handler(h http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return httpadapter.NewV2(h).ProxyWithContext
}

// Invoke runs one raw API Gateway v2 event through the Lambda entry, as the Lambda
// runtime would: JSON in, JSON-decoded response out. Tests and benchmarks use it.
func Invoke(ctx context.Context, h http.Handler, event []byte) (events.APIGatewayV2HTTPResponse, error) {
	var req events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(event, &req); err != nil {
		return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("decode event: %w", err)
	}
	return Handler(h)(ctx, req)
}

// Start serves h until ctx is done: under Lambda through the runtime API, otherwise on
// addr with a plain net/http server that shuts down gracefully.
func Start(ctx context.Context, h http.Handler, addr string, getenv func(string) string, log *slog.Logger) error {
	if UnderLambda(getenv) {
		lambda.StartWithOptions(Handler(h), lambda.WithContext(ctx))
		return nil
	}
	return Serve(ctx, h, addr, log)
}

// Serve runs a net/http server on addr until ctx is done.
func Serve(ctx context.Context, h http.Handler, addr string, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	return ServeListener(ctx, h, ln, log)
}

// WriteTimeout is the local server's write timeout: a request's deadline
// (config.RequestTimeout) stays a few seconds below it, so every request is answered
// before the server would close the connection.
const WriteTimeout = 60 * time.Second

// ServeListener serves on an existing listener until ctx is done.
func ServeListener(ctx context.Context, h http.Handler, ln net.Listener, log *slog.Logger) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if log != nil {
		log.Info("listening", "addr", ln.Addr().String())
	}
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return srv.Shutdown(shutdownCtx)
	}
}

// NewLogger returns the JSON logger the functions use (CloudWatch reads JSON lines).
func NewLogger(level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}
