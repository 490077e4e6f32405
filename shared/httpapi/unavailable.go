package httpapi

import (
	"net/http"
	"strconv"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/dependency"
)

// retryAfter is the Retry-After of an answer failed by a dependency: when its breaker
// lets the next call through.
var retryAfter = []string{strconv.Itoa(int((dependency.OpenFor + 999_999_999) / 1e9))}

// dependencyDown answers a failed request that a dependency failed (its breaker
// open, a call timed out or could not connect: dependency.Request), and reports whether
// it did. Every such answer carries Retry-After. A read answers 503 Service
// temporarily unavailable; a write keeps the status and message its route gives an
// unexpected failure (e), as the OpenAPI document fixes 500 for failed writes.
func dependencyDown(w http.ResponseWriter, r *http.Request, e *apperr.Error, err error) bool {
	dep := dependency.Of(r.Context()).Unavailable()
	if dep == "" {
		return false
	}
	w.Header()["Retry-After"] = retryAfter
	status, msg := http.StatusServiceUnavailable, apperr.MsgUnavailable
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		status, msg = e.Code.Status(), e.Message
	}
	Logger(r.Context()).Error("request failed", "status", status, "dependency", dep, "error", err.Error())
	Message(w, r, status, msg)
	return true
}
