package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/mediacatalog/service/shared/apperr"
)

// The origin secret: CloudFront adds OriginSecretHeader to every request it sends to
// the origin, with a value from Secrets Manager (config ORIGIN_SECRET, and
// ORIGIN_SECRET_PREVIOUS while a rotation is under way), so that the API answers only
// what came through the distribution, where the cache and the per-client limits are.
const (
	OriginSecretHeader = "X-Origin-Verify"
	// ViewerAddressHeader is CloudFront's viewer address, "ip:port" (IPv6 unbracketed
	// or bracketed); trusted only beside a valid secret, as anyone can send it, and
	// only as one public address (viewerAddressOf).
	ViewerAddressHeader = "Cloudfront-Viewer-Address"
)

// MsgOriginRefused is the 403 of a request that did not come through the distribution.
const MsgOriginRefused = "Forbidden"

// checkOrigin refuses with a 403 Response Model a request whose OriginSecretHeader is
// none of secrets, unless exempt matches it (a route that IAM authorizes and internal
// services call directly); with no secrets it checks nothing. It records the caller's
// address for ClientIP: the viewer's, from ViewerAddressHeader, on a request with a
// valid secret (viewerAddressOf); otherwise the connection's (SourceIP). The secret
// header is removed from the request before any handler sees it.
func checkOrigin(next http.Handler, o *Options) http.Handler {
	secrets, exempt := o.OriginSecrets, o.OriginExempt
	var sums [][sha256.Size]byte
	for _, s := range secrets {
		if s != "" {
			sums = append(sums, sha256.Sum256([]byte(s)))
		}
	}
	var exemptMux *http.ServeMux
	if len(exempt) > 0 {
		exemptMux = http.NewServeMux()
		for _, p := range exempt {
			exemptMux.Handle(p, http.NotFoundHandler())
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		client := ""
		if len(sums) > 0 {
			got, sent := r.Header[OriginSecretHeader]
			if sent {
				delete(r.Header, OriginSecretHeader)
			}
			if sent && len(got) == 1 && validSecret(got[0], sums) {
				client = viewerAddressOf(r.Header)
			} else if !exempted(exemptMux, r) {
				Error(w, r, apperr.Wrap(apperr.Forbidden, MsgOriginRefused, errOriginSecret))
				return
			}
		}
		if client == "" {
			client = SourceIP(r)
		}
		if rl, ok := r.Context().Value(loggerKey{}).(*requestLogger); ok {
			rl.client = client
		}
		next.ServeHTTP(w, r)
	})
}

var errOriginSecret = originSecretError{}

type originSecretError struct{}

func (originSecretError) Error() string {
	return "request without the origin secret (not through the distribution)"
}

// validSecret compares the digests of value and of each secret in constant time, all
// of them whatever matches, so that neither the time taken nor the value's length
// tells how much of a secret was right.
func validSecret(value string, sums [][sha256.Size]byte) bool {
	got := sha256.Sum256([]byte(value))
	ok := 0
	for i := range sums {
		ok |= subtle.ConstantTimeCompare(got[:], sums[i][:])
	}
	return ok == 1
}

func exempted(mux *http.ServeMux, r *http.Request) bool {
	if mux == nil {
		return false
	}
	_, pattern := mux.Handler(r)
	return pattern != ""
}

// viewerAddressOf is the viewer's address of a request that came through the
// distribution, as CloudFront gave it, or "" (the caller then keys on the connection's)
// when the request does not carry exactly one such address. CloudFront adds the header
// where an origin request policy names it (template.yaml's do so by name, and forward
// no viewer's headers wholesale), but its documentation promises to overwrite a viewer's
// copy only of an origin custom header: a viewer's own value could arrive beside
// CloudFront's, as a second line or joined to it with a comma (API Gateway's payload
// joins repeated headers), and neither is then believed. A viewer reaches CloudFront
// over the internet, so a value that is no public unicast address is not CloudFront's.
// What remains is trusting CloudFront to write its own value where it adds the header,
// which is what its documentation describes.
func viewerAddressOf(h http.Header) string {
	values := h.Values(ViewerAddressHeader)
	if len(values) != 1 {
		return ""
	}
	a, ok := viewerAddress(values[0])
	if !ok || !a.IsGlobalUnicast() || a.IsPrivate() {
		return ""
	}
	return a.String()
}

// viewerAddress is the address of a CloudFront-Viewer-Address value ("ip:port",
// "[ipv6]:port" or an IPv6 address with the port after its last colon), IPv4-mapped
// addresses unmapped, or false when the value is not one.
func viewerAddress(v string) (netip.Addr, bool) {
	v = strings.TrimSpace(v)
	if ap, err := netip.ParseAddrPort(v); err == nil {
		return ap.Addr().Unmap(), true
	}
	i := strings.LastIndexByte(v, ':')
	if i < 0 {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(v[:i])
	if err != nil || !a.Is6() || a.Zone() != "" {
		return netip.Addr{}, false
	}
	if _, err := strconv.ParseUint(v[i+1:], 10, 16); err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// ClientIP is the caller's address: the viewer's as CloudFront saw it when the request
// came through the distribution with the origin secret, else the connection's peer
// (SourceIP). The OAuth limiter keys on it; audit records carry it (ClientAddress).
func ClientIP(r *http.Request) string {
	if a := ClientAddress(r.Context()); a != "" {
		return a
	}
	return SourceIP(r)
}

// ClientAddress is ClientIP of the request whose context ctx is, or "" outside a
// request served through Wrap.
func ClientAddress(ctx context.Context) string {
	if rl, ok := ctx.Value(loggerKey{}).(*requestLogger); ok {
		return rl.client
	}
	return ""
}
