package cmdrun

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"testing"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantCode int
		wantOut  string
	}{
		{"success", nil, 0, ""},
		{"help requested", flag.ErrHelp, 0, ""},
		{"help wrapped", fmt.Errorf("parse: %w", flag.ErrHelp), 0, ""},
		{"failure", errors.New("no database"), 1, "seed: no database\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if code := exitCode("seed", tt.err, &out); code != tt.wantCode || out.String() != tt.wantOut {
				t.Errorf("exitCode = %d, output %q; want %d, %q", code, out.String(), tt.wantCode, tt.wantOut)
			}
		})
	}
}
