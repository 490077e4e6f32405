package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/httpapi"
)

// Cookie names. The API reads RefreshCookie only; AccessCookie is for the frontend.
const (
	RefreshCookie = "refreshToken"
	AccessCookie  = "accessToken"
)

// Token types, the typ claim: a token of one type never passes as the other.
const (
	typeRefresh = "refresh"
	typeAccess  = "access"
)

// Store is what Sessions needs from the database; *postgres.DB satisfies it.
type Store interface {
	// CreateSession starts a session of userID until expiresAt and returns its id (a
	// UUID); an unknown user is apperr.NotFound.
	CreateSession(ctx context.Context, userID int64, expiresAt time.Time) (string, error)
	// CreateLoginSession is CreateSession for a login through the provider account
	// acct: catalog.ErrLoginMoved when the account is no longer linked to userID once
	// the session would start (a forced logout removed the link meanwhile).
	CreateLoginSession(ctx context.Context, userID int64, acct catalog.ProviderAccount, expiresAt time.Time) (string, error)
	// SessionUser loads userID with their permissions if sessionID is their live
	// session: apperr.NotFound for a missing user, apperr.Unauthorized for a session
	// that is unknown, revoked or expired.
	SessionUser(ctx context.Context, userID int64, sessionID string) (catalog.SessionUser, error)
}

// Tokens are the signed tokens of one session.
type Tokens struct {
	SessionID      string
	Refresh        string
	RefreshExpires time.Time
	Access         string
	AccessExpires  time.Time
}

// Sessions issues and verifies the tokens of sessions.
type Sessions struct {
	store      Store
	secret     []byte
	refreshTTL time.Duration
	accessTTL  time.Duration
	secure     bool
	now        func() time.Time
}

// Option adjusts Sessions.
type Option func(*Sessions)

// WithClock makes Sessions read the time from now instead of the system clock (tests
// mint expired tokens with a clock set in the past).
func WithClock(now func() time.Time) Option {
	return func(s *Sessions) { s.now = now }
}

// NewSessions returns Sessions signing with cfg.JWTSecret. It refuses a configuration
// without a usable secret (config.RequireJWTSecret).
func NewSessions(store Store, cfg config.Config, opts ...Option) (*Sessions, error) {
	if err := cfg.RequireJWTSecret(); err != nil {
		return nil, err
	}
	if cfg.RefreshTokenTTL <= 0 || cfg.AccessTokenTTL <= 0 {
		return nil, errors.New("auth: token lifetimes must be positive")
	}
	s := &Sessions{
		store:      store,
		secret:     []byte(cfg.JWTSecret),
		refreshTTL: cfg.RefreshTokenTTL,
		accessTTL:  cfg.AccessTokenTTL,
		secure:     !cfg.Local(),
		now:        time.Now,
	}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

type claims struct {
	jwt.RegisteredClaims
	SessionID string `json:"sid"`
	Type      string `json:"typ"`
}

// Issue starts a session of userID and signs its refresh and access tokens: the
// operators' login (infra/local/cmd/token). An unknown user is apperr.NotFound.
func (s *Sessions) Issue(ctx context.Context, userID int64) (Tokens, error) {
	return s.issue(userID, func(exp time.Time) (string, error) { return s.store.CreateSession(ctx, userID, exp) })
}

// IssueLogin is Issue for a login through the provider account acct, found linked to
// userID: catalog.ErrLoginMoved when the link is gone by the time the session starts
// (see Store.CreateLoginSession), so a login that raced a forced logout never starts
// a session the logout did not see.
func (s *Sessions) IssueLogin(ctx context.Context, userID int64, acct catalog.ProviderAccount) (Tokens, error) {
	return s.issue(userID, func(exp time.Time) (string, error) {
		return s.store.CreateLoginSession(ctx, userID, acct, exp)
	})
}

// issue starts a session with start and signs its tokens.
func (s *Sessions) issue(userID int64, start func(expires time.Time) (string, error)) (Tokens, error) {
	now := s.now().Truncate(time.Second) // JWT times have whole seconds
	t := Tokens{RefreshExpires: now.Add(s.refreshTTL), AccessExpires: now.Add(s.accessTTL)}
	sid, err := start(t.RefreshExpires)
	if err != nil {
		return Tokens{}, err
	}
	t.SessionID = sid
	if t.Refresh, err = s.sign(userID, sid, typeRefresh, now, t.RefreshExpires); err != nil {
		return Tokens{}, err
	}
	if t.Access, err = s.sign(userID, sid, typeAccess, now, t.AccessExpires); err != nil {
		return Tokens{}, err
	}
	return t, nil
}

func (s *Sessions) sign(userID int64, sid, typ string, iat, exp time.Time) (string, error) {
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   strconv.FormatInt(userID, 10),
			IssuedAt:  jwt.NewNumericDate(iat),
			ExpiresAt: jwt.NewNumericDate(exp),
		},
		SessionID: sid,
		Type:      typ,
	})
	signed, err := tok.SignedString(s.secret)
	if err != nil {
		return "", fmt.Errorf("sign %s token: %w", typ, err)
	}
	return signed, nil
}

// SetCookies sets the refreshToken cookie (for the session's lifetime) and the
// accessToken cookie (for the access token's), both HttpOnly, SameSite=Lax, Path=/ and
// Secure except when DB_ENV=local.
func (s *Sessions) SetCookies(w http.ResponseWriter, t Tokens) {
	now := s.now()
	http.SetCookie(w, s.cookie(RefreshCookie, t.Refresh, t.RefreshExpires.Sub(now)))
	http.SetCookie(w, s.cookie(AccessCookie, t.Access, t.AccessExpires.Sub(now)))
}

func (s *Sessions) cookie(name, value string, maxAge time.Duration) *http.Cookie {
	return &http.Cookie{
		Name:     name,
		Value:    value,
		Path:     "/",
		MaxAge:   max(int(maxAge/time.Second), 1),
		HttpOnly: true,
		Secure:   s.secure,
		SameSite: http.SameSiteLaxMode,
	}
}

// Authenticate verifies the request's refreshToken cookie and returns its principal:
// apperr.Unauthorized when the cookie is missing, malformed, forged, expired, of the
// wrong type or its session is revoked or expired; apperr.NotFound "User not found"
// for a valid token whose user no longer exists.
//
// A request with more than one refreshToken cookie is apperr.Unauthorized too, and an
// audit record of the refusal: a browser sends every cookie whose domain and path
// match, most specific path first, so a host of a sibling subdomain can plant one
// (Domain=<parent>, a narrower Path) that would be read before the session's own.
// Which of them is the user's cannot be told, so neither is used.
func (s *Sessions) Authenticate(r *http.Request) (Principal, error) {
	cookies := r.CookiesNamed(RefreshCookie)
	if len(cookies) > 1 {
		httpapi.Refused(r, fmt.Sprintf("%d refreshToken cookies", len(cookies)))
		return Principal{}, unauthorized(errors.New("more than one refreshToken cookie"))
	}
	if len(cookies) == 0 || cookies[0].Value == "" {
		return Principal{}, unauthorized(errors.New("no refreshToken cookie"))
	}
	userID, sid, err := s.verify(cookies[0].Value, typeRefresh)
	if err != nil {
		return Principal{}, unauthorized(err)
	}
	u, err := s.store.SessionUser(r.Context(), userID, sid)
	if err != nil {
		return Principal{}, err
	}
	return Principal{UserID: u.ID, Username: u.Username, SessionID: sid, Permissions: u.Permissions, SignedInAt: u.SignedInAt}, nil
}

// verify checks the token's HS256 signature, its expiry and its type, and returns its
// subject and session id.
func (s *Sessions) verify(token, typ string) (int64, string, error) {
	var c claims
	_, err := jwt.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		if t.Method != jwt.SigningMethodHS256 {
			return nil, fmt.Errorf("unexpected signing method %v", t.Header["alg"])
		}
		return s.secret, nil
	},
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(s.now),
	)
	if err != nil {
		return 0, "", fmt.Errorf("verify token: %w", err)
	}
	if c.Type != typ {
		return 0, "", fmt.Errorf("token type %q, want %q", c.Type, typ)
	}
	userID, err := strconv.ParseInt(c.Subject, 10, 64)
	if err != nil || userID <= 0 {
		return 0, "", fmt.Errorf("token subject %q is not a user id", c.Subject)
	}
	if !isUUID(c.SessionID) {
		return 0, "", errors.New("token session id is not a UUID")
	}
	return userID, c.SessionID, nil
}

// RequireUser serves h to authenticated requests only, with the Principal in the
// request's context.
func (s *Sessions) RequireUser(h http.Handler) http.Handler {
	return s.require("", h)
}

// Require serves h to authenticated requests whose principal has perm; others get 401,
// 404 (user gone) or 403 Forbidden.
func (s *Sessions) Require(perm string, h http.Handler) http.Handler {
	return s.require(perm, h)
}

func (s *Sessions) require(perm string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.Authenticate(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		// The user is known from here on: a refusal, here or by the store's access
		// rules, is recorded with them (httpapi.Error records every 403).
		r = r.WithContext(httpapi.WithActor(r.Context(), p.UserID))
		if perm != "" && !p.Has(perm) {
			httpapi.Error(w, r, apperr.Wrap(apperr.Forbidden, apperr.MsgForbidden,
				fmt.Errorf("user %d lacks the permission %s", p.UserID, perm)))
			return
		}
		h.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}

func unauthorized(cause error) error {
	return apperr.Wrap(apperr.Unauthorized, apperr.MsgUnauthorized, cause)
}

// isUUID reports whether s has the canonical textual form of a UUID.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}
