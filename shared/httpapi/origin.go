package httpapi

import (
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/mediacatalog/service/shared/apperr"
)

// MsgJSONOnly is the 400 of a request body that is not declared as JSON.
const MsgJSONOnly = "Content-Type must be application/json"

// guardWrites lets writes come only from the frontend, and bodies only as JSON.
//
// A write (any method but GET, HEAD and OPTIONS) that carries cookies, the credential
// browsers attach on their own, is refused with 403 Forbidden when:
//   - Sec-Fetch-Site is cross-site;
//   - Sec-Fetch-Site is same-site and Origin is not one of origins (a host of the same
//     registrable domain, such as a staging page, is not the frontend);
//   - Origin is present and not one of origins (unless Sec-Fetch-Site says
//     same-origin: the API's own origin).
//
// SameSite=Lax cookies alone do not separate hosts of one site, and a form posting
// text/plain needs no preflight. Callers without cookies (internal services calling
// POST /user/avatar/change/{id}) and browsers' same-origin requests pass.
//
// A write with a body must declare it application/json (any parameters, such as
// charset): anything else is 400 MsgJSONOnly, before any handler reads it. Requests
// without a body are not concerned.
func guardWrites(next http.Handler, o *Options) http.Handler {
	origins := o.CORSOrigins
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			next.ServeHTTP(w, r)
			return
		}
		if len(r.Cookies()) > 0 && !fromFrontend(r, origins) {
			Error(w, r, apperr.New(apperr.Forbidden, apperr.MsgForbidden))
			return
		}
		if hasBody(r) && !isJSON(r.Header.Get("Content-Type")) {
			Error(w, r, apperr.New(apperr.Invalid, MsgJSONOnly))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// fromFrontend reports whether a browser's write comes from an allowed origin, as its
// Sec-Fetch-Site and Origin headers tell. The API's own origin (same-origin) passes;
// clients that send neither header pass.
func fromFrontend(r *http.Request, origins []string) bool {
	origin := r.Header.Get("Origin")
	allowed := origin != "" && slices.Contains(origins, strings.TrimRight(origin, "/"))
	switch strings.ToLower(strings.TrimSpace(r.Header.Get("Sec-Fetch-Site"))) {
	case "cross-site":
		return false
	case "same-origin":
		return true
	case "same-site":
		return allowed
	}
	return origin == "" || allowed
}

// hasBody reports whether the request carries a body: a positive Content-Length, or
// an unknown length (a chunked body).
func hasBody(r *http.Request) bool {
	return r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
}

// isJSON reports whether a Content-Type value names application/json.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}
