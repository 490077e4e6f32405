package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// sharedServices points run at the test process's services, so each case does not
// start a stack of its own.
func sharedServices(t *testing.T) (map[string]string, func(string) string) {
	env := map[string]string{
		"DATABASE_URL":              testenv.DatabaseURL(t),
		"AWS_ENDPOINT_URL_DYNAMODB": testenv.DynamoEndpoint(t),
		"AWS_ENDPOINT_URL_S3":       testenv.S3Endpoint(t),
	}
	return env, func(k string) string { return env[k] }
}

func TestRun(t *testing.T) {
	env, getenv := sharedServices(t)
	tests := []struct {
		name    string
		args    []string
		wantErr error // an exitCode, or nil
		wantOut string
	}{
		{
			name:    "exports the services",
			args:    []string{"--", "sh", "-c", `echo "$DATABASE_URL $AWS_ENDPOINT_URL_DYNAMODB $AWS_ENDPOINT_URL_S3 $S3_BUCKET"`},
			wantOut: env["DATABASE_URL"] + " " + env["AWS_ENDPOINT_URL_DYNAMODB"] + " " + env["AWS_ENDPOINT_URL_S3"] + " media-catalog-images\n",
		},
		{name: "passes the exit code on", args: []string{"--", "sh", "-c", "exit 3"}, wantErr: exitCode(3)},
		{name: "command killed by a signal", args: []string{"--", "sh", "-c", "kill -TERM $$"}, wantErr: exitCode(128 + 15)},
		{name: "no command", args: nil, wantErr: exitCode(2)},
		{name: "unknown flag", args: []string{"-nope", "--", "true"}, wantErr: exitCode(2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, getenv, &stdout, &stderr)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("run = %v, want %v; stderr:\n%s", err, tt.wantErr, stderr.String())
			}
			if tt.wantOut != "" && stdout.String() != tt.wantOut {
				t.Errorf("stdout = %q, want %q", stdout.String(), tt.wantOut)
			}
		})
	}
}

func TestRunCommandNotFound(t *testing.T) {
	_, getenv := sharedServices(t)
	err := run(context.Background(), []string{"--", "/nonexistent/command"}, getenv, io.Discard, io.Discard)
	var code exitCode
	if err == nil || errors.As(err, &code) {
		t.Errorf("run = %v, want an error about the command", err)
	}
}

// A SIGTERM sent to withstack reaches the command, whose exit code comes back.
func TestRunForwardsSignals(t *testing.T) {
	_, getenv := sharedServices(t)
	stdout := &onLine{line: "ready", do: func() { _ = syscall.Kill(os.Getpid(), syscall.SIGTERM) }}
	script := `trap 'exit 5' TERM; echo ready; while :; do sleep 0.1; done`
	err := run(context.Background(), []string{"--", "sh", "-c", script}, getenv, stdout, io.Discard)
	if !errors.Is(err, exitCode(5)) {
		t.Errorf("run = %v, want exit code 5 from the command's TERM trap", err)
	}
}

// onLine calls do once when line has been written.
type onLine struct {
	line string
	do   func()
	buf  strings.Builder
	once sync.Once
}

func (w *onLine) Write(p []byte) (int, error) {
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.line+"\n") {
		w.once.Do(w.do)
	}
	return len(p), nil
}
