// Package httpapi holds what every route group shares on the HTTP side: the one place
// that writes errors as the Response Model, JSON encoding and decoding, parsing of the
// common parameters, the middleware, and route registration.
package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/mediacatalog/service/shared/apperr"
)

// Response is the OpenAPI document's Response Model, the body of every error and plain message.
type Response struct {
	Data string `json:"data"`
	Code int    `json:"code"`
}

// JSON writes v as a JSON body with the given status. The encoder writes into w (the
// gzip stream when compressing) as it goes, so a large list is not held once encoded and
// again compressed. It marshals a value fully before its first write, so an encoding
// error still answers a Response Model.
func JSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	w.Header()["Content-Type"] = jsonContentType
	lw := &lazyStatus{ResponseWriter: w, status: status}
	if err := json.NewEncoder(lw).Encode(v); err != nil {
		if !lw.wrote {
			Error(w, r, err)
		}
		return
	}
}

// jsonContentType is every JSON answer's Content-Type, one slice made once and put in
// the header map as it is (Header.Set would allocate one per answer).
var jsonContentType = []string{"application/json; charset=utf-8"}

// lazyStatus sends the status with the first byte of the body.
type lazyStatus struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *lazyStatus) Write(b []byte) (int, error) {
	if !w.wrote {
		w.wrote = true
		w.ResponseWriter.WriteHeader(w.status)
	}
	return w.ResponseWriter.Write(b)
}

// Message writes a Response Model with the given status and message.
func Message(w http.ResponseWriter, r *http.Request, status int, msg string) {
	JSON(w, r, status, Response{Data: msg, Code: status})
}

// OK writes a 200 Response Model with msg.
func OK(w http.ResponseWriter, r *http.Request, msg string) { Message(w, r, http.StatusOK, msg) }

// Error is the one place that turns an error into a status and a Response Model body.
// Errors with an apperr code show their message; anything else is an internal error:
// logged with its cause, answered with a message that leaks nothing.
func Error(w http.ResponseWriter, r *http.Request, err error) {
	log := Logger(r.Context())
	e, ok := apperr.As(err)
	if !ok {
		e = apperr.Wrap(apperr.Internal, apperr.MsgInternal, err)
	}
	status := e.Code.Status()
	if status >= 500 && dependencyDown(w, r, e, err) {
		return
	}
	if status >= 500 && errors.Is(err, context.Canceled) {
		// Cancelled from outside, not failed: the client went away (the handlers'
		// contexts outlive a disconnect, see workContext, so this is a caller that
		// cancelled its own call). No 500 is counted; nobody reads the answer.
		log.Warn("request cancelled by the client", "error", err.Error())
		Message(w, r, StatusClientClosedRequest, "Client closed request")
		return
	}
	if status == http.StatusForbidden {
		why := ""
		if e.Err != nil {
			why = e.Err.Error()
		}
		refused(r, why)
	} else if status >= 500 {
		log.Error("request failed", "status", status, "error", err.Error())
	} else if e.Err != nil {
		log.Debug("request rejected", "status", status, "error", err.Error())
	}
	Message(w, r, status, e.Message)
}

// StatusClientClosedRequest is logged (and answered, to nobody) for a request whose
// client went away before the answer, as nginx's 499: not a server error.
const StatusClientClosedRequest = 499

// DefaultMaxBody bounds JSON request bodies. Image uploads pass their own, larger limit.
const DefaultMaxBody = 1 << 20

// Validator is implemented by request types that check their own required fields.
type Validator interface{ Validate() error }

// Decode reads a JSON body into a T. Malformed JSON, a wrongly typed field, a body over
// maxBytes (DefaultMaxBody when 0) and, through Validate, a missing required field all
// answer 400 Required parameters missing; a body that is not valid UTF-8 or has a
// string holding NUL answers 400 MsgInvalidText. Unknown fields are ignored.
func Decode[T any](w http.ResponseWriter, r *http.Request, maxBytes int64) (T, error) {
	var v T
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBody
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
	if err != nil {
		return v, apperr.Wrap(apperr.Invalid, apperr.MsgMissingParams, err)
	}
	return DecodeBytes[T](body)
}

// DecodeBytes is Decode of a body already read (the fuzz tests call it directly).
func DecodeBytes[T any](body []byte) (T, error) {
	var v T
	if !validJSONText(body) {
		return v, invalidText()
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&v); err != nil {
		return v, apperr.Wrap(apperr.Invalid, apperr.MsgMissingParams, err)
	}
	// Exactly one JSON value: trailing garbage is malformed input.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return v, apperr.Wrap(apperr.Invalid, apperr.MsgMissingParams, errors.New("trailing data after JSON body"))
	}
	if val, ok := any(&v).(Validator); ok {
		if err := val.Validate(); err != nil {
			return v, err
		}
	}
	return v, nil
}

// Required reports a missing-parameters error when any of the strings is blank.
func Required(values ...string) error {
	for _, s := range values {
		if strings.TrimSpace(s) == "" {
			return apperr.MissingParams()
		}
	}
	return nil
}

// LevelAudit is the level of audit records (package audit): above ERROR, so that no
// LOG_LEVEL drops them; the functions' JSON logs name it "AUDIT".
const LevelAudit = slog.Level(16)

// Logger returns the request's logger (with its request id), or the default logger.
func Logger(ctx interface{ Value(any) any }) *slog.Logger {
	switch l := ctx.Value(loggerKey{}).(type) {
	case *requestLogger: // a request's (logRequests)
		return l.get()
	case *slog.Logger: // WithLogger's
		return l
	}
	return slog.Default()
}
