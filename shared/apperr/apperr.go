// Package apperr is the service's error vocabulary: a small set of codes that
// stores and handlers return, and that exactly one place (httpapi.Error) turns
// into an HTTP status and a Response Model body.
package apperr

import (
	"errors"
	"fmt"
	"net/http"
)

// Code classifies an error. Each code maps to one HTTP status.
type Code string

const (
	Invalid      Code = "invalid"      // 400
	Unauthorized Code = "unauthorized" // 401
	Forbidden    Code = "forbidden"    // 403
	NotFound     Code = "not_found"    // 404
	NotAllowed   Code = "not_allowed"  // 405
	Conflict     Code = "conflict"     // 409
	RateLimited  Code = "rate_limited" // 429
	Internal     Code = "internal"     // 500
	Unavailable  Code = "unavailable"  // 503
)

// Messages the OpenAPI document fixes word for word.
const (
	MsgMissingParams  = "Required parameters missing"
	MsgUnauthorized   = "Unauthorized"
	MsgForbidden      = "Forbidden"
	MsgInternal       = "Internal server error"
	MsgUserNotFound   = "User not found"
	MsgNoFileService  = "This service is not handling file uploads."
	MsgTooManyRequest = "Too many requests, please try again later."
	// MsgUnavailable is the 503 of a dependency that does not answer (the OpenAPI
	// document fixes no message for it).
	MsgUnavailable = "Service temporarily unavailable"
)

// MsgInvalidText is the 400 of text that is not valid UTF-8 or holds a NUL character
// (the OpenAPI document fixes no message for it).
const (
	MsgInvalidText = "Invalid text: parameters must be valid UTF-8 without NUL characters"
)

// Error is an error with a code and a message that is safe to show to clients.
// Err, when set, is the underlying cause; it is logged, never shown.
type Error struct {
	Code    Code
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an error with the given code and client-facing message.
func New(code Code, msg string) *Error { return &Error{Code: code, Message: msg} }

// Wrap returns an error with the given code and message whose cause is err.
func Wrap(code Code, msg string, err error) *Error { return &Error{Code: code, Message: msg, Err: err} }

// MissingParams is the OpenAPI document's 400 for absent, malformed or wrongly typed input.
func MissingParams() *Error { return New(Invalid, MsgMissingParams) }

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// CodeOf returns the code of err: Internal for errors without one.
func CodeOf(err error) Code {
	if e, ok := As(err); ok {
		return e.Code
	}
	return Internal
}

// InternalAs gives an unexpected failure (code Internal, or no code) the route's own
// 500 message, as some routes of the OpenAPI document name one; errors with another code (400, 404,
// 409) keep theirs, and a nil error stays nil.
func InternalAs(err error, msg string) error {
	if err == nil || msg == "" || CodeOf(err) != Internal {
		return err
	}
	return Wrap(Internal, msg, err)
}

// Status maps a code to its HTTP status.
func (c Code) Status() int {
	switch c {
	case Invalid:
		return http.StatusBadRequest
	case Unauthorized:
		return http.StatusUnauthorized
	case Forbidden:
		return http.StatusForbidden
	case NotFound:
		return http.StatusNotFound
	case NotAllowed:
		return http.StatusMethodNotAllowed
	case Conflict:
		return http.StatusConflict
	case RateLimited:
		return http.StatusTooManyRequests
	case Unavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}
