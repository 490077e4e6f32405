package dependency

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
)

// Down reports whether err says that the dependency did not answer: a timeout, or a
// connection that could not be made or broke (refused, reset, closed mid-answer), or
// a PostgreSQL error of the connection classes (08, and 57P: the server shutting down
// or not yet accepting). Every other error is an answer, and the dependency is up.
func Down(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var st interface{ SQLState() string }
	if errors.As(err, &st) {
		s := st.SQLState()
		return strings.HasPrefix(s, "08") || strings.HasPrefix(s, "57P")
	}
	// The AWS SDK's "request send failed": no response came (smithy-go's
	// RequestSendError says so with this method).
	var ce interface{ ConnectionError() bool }
	if errors.As(err, &ce) && ce.ConnectionError() {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}
