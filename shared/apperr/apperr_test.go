package apperr_test

import (
	"errors"
	"testing"

	"github.com/mediacatalog/service/shared/apperr"
)

func TestInternalAs(t *testing.T) {
	cause := errors.New("connection reset")
	tests := []struct {
		name     string
		err      error
		msg      string
		wantCode apperr.Code
		wantMsg  string
	}{
		{"an unexpected failure takes the route's message", cause, "An error occurred", apperr.Internal, "An error occurred"},
		{"an internal apperr takes it too", apperr.Wrap(apperr.Internal, apperr.MsgInternal, cause), "An error occurred", apperr.Internal, "An error occurred"},
		{"a 404 keeps its own", apperr.New(apperr.NotFound, "Contributor not found"), "An error occurred", apperr.NotFound, "Contributor not found"},
		{"a 400 keeps its own", apperr.MissingParams(), "An error occurred", apperr.Invalid, apperr.MsgMissingParams},
		{"no route message: unchanged", cause, "", apperr.Internal, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := apperr.InternalAs(tt.err, tt.msg)
			if apperr.CodeOf(got) != tt.wantCode || !errors.Is(got, tt.err) {
				t.Fatalf("InternalAs(%v) = %v", tt.err, got)
			}
			if e, ok := apperr.As(got); tt.wantMsg != "" && (!ok || e.Message != tt.wantMsg) {
				t.Errorf("message %v, want %q", got, tt.wantMsg)
			}
		})
	}
	if apperr.InternalAs(nil, "An error occurred") != nil {
		t.Error("a nil error became an error")
	}
}
