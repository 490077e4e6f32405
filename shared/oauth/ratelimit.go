package oauth

import (
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/httpapi"
)

// MsgUnavailable answers every OAuth route with 503 while the rate limiter cannot be
// asked (DynamoDB unreachable): the limiter fails closed.
const MsgUnavailable = "Service temporarily unavailable"

// rateLimit admits requests while the caller's address (httpapi.ClientIP: the viewer's
// address CloudFront gives a request carrying the origin secret, else API Gateway's
// requestContext.http.sourceIp, the peer address locally; never X-Forwarded-For) is
// within the limit, one atomic count per request; IPv6 callers count by their /64
// (limitKey). Every response carries the IETF
// draft's RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset (seconds); a refused
// request gets 429 Too many requests with Retry-After (seconds).
func rateLimit(l Limiter) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The request's dependency budget bounds the call: an unreachable DynamoDB
			// answers 503 within it.
			d, err := l.Allow(r.Context(), limitKey(httpapi.ClientIP(r)))
			if err != nil {
				httpapi.Error(w, r, apperr.Wrap(apperr.Unavailable, MsgUnavailable, err))
				return
			}
			h := w.Header()
			h.Set("RateLimit-Limit", strconv.Itoa(d.Limit))
			h.Set("RateLimit-Remaining", strconv.Itoa(max(d.Remaining, 0)))
			h.Set("RateLimit-Reset", strconv.Itoa(seconds(time.Until(d.Reset))))
			if !d.Allowed {
				h.Set("Retry-After", strconv.Itoa(max(seconds(d.RetryAfter), 1)))
				httpapi.Error(w, r, apperr.New(apperr.RateLimited, apperr.MsgTooManyRequest))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// limitKey is the limiter's key of a source address: an IPv4 address itself (also
// written as IPv4-mapped IPv6), an IPv6 address its /64, the prefix one subscriber
// gets, whose 2^64 addresses would otherwise each have a budget of their own. Text
// that is not an address is its own key.
func limitKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return "oauth:" + ip
	}
	a = a.Unmap().WithZone("")
	if a.Is6() {
		p, _ := a.Prefix(64) // cannot fail: 64 bits of an IPv6 address
		return "oauth:" + p.String()
	}
	return "oauth:" + a.String()
}

// seconds rounds d up to whole seconds, never below zero.
func seconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d.Seconds()))
}
