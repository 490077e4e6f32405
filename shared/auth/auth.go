// Package auth is the service's access control: sessions backed by signed tokens, the
// authenticated Principal, and the middleware that demands a permission.
//
// A login (the OAuth callback through Sessions.IssueLogin, or the operators' token
// command through Sessions.Issue) starts a session row and signs two HS256 JWTs for
// it: a refresh token, set as the refreshToken cookie, and a short-lived access token,
// set as the accessToken cookie for the frontend. The API authenticates with the refreshToken cookie only:
// each request verifies its signature and expiry, then loads the user, the live
// session and the user's permissions in one query, so revoking the session (a forced
// logout) or deleting the user takes effect at once.
package auth

import (
	"context"
	"net/http"
	"slices"
	"time"
)

// The permissions the administrative routes demand: the keys of the built-in
// permissions (the names the OpenAPI document gives). A key never changes; renaming a permission changes
// its label only, so authorisation is unaffected.
const (
	PermViewUsers          = "view-users"
	PermEditUsers          = "edit-users"
	PermDeleteUsers        = "delete-users"
	PermViewRoles          = "view-roles"
	PermEditRoles          = "edit-roles"
	PermAddRoles           = "add-roles"
	PermDeleteRoles        = "delete-roles"
	PermViewPermissions    = "view-permissions"
	PermEditPermissions    = "edit-permissions"
	PermAddPermissions     = "add-permissions"
	PermDeletePermissions  = "delete-permissions"
	PermViewContributors   = "view-contributors"
	PermEditContributors   = "edit-contributors"
	PermAddContributors    = "add-contributors"
	PermDeleteContributors = "delete-contributors"
)

// Principal is the authenticated user of a request.
type Principal struct {
	UserID      int64
	Username    string
	SessionID   string
	Permissions []string  // keys of the built-in permissions the user's roles grant
	SignedInAt  time.Time // the session's sign-in (its start)
}

// Has reports whether the principal's roles grant the permission keyed perm.
func (p Principal) Has(perm string) bool {
	return slices.Contains(p.Permissions, perm)
}

type principalKey struct{}

// WithPrincipal returns a context carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal that RequireUser or Require put in the context.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// Guard authenticates a request and demands a permission of its user; *Sessions
// satisfies it. The admin route groups take one, so that their tests can give another.
type Guard interface {
	Require(perm string, h http.Handler) http.Handler
}
