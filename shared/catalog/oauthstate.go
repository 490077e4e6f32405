package catalog

import (
	"errors"
	"time"
)

// OAuthFlow is the OAuth flow a state token was issued for.
type OAuthFlow string

// The OAuth flows.
const (
	FlowLogin OAuthFlow = "login"
	FlowLink  OAuthFlow = "link"
)

// OAuthState is a server-side OAuth state token and what it is bound to.
type OAuthState struct {
	Token     string
	Provider  string
	Flow      OAuthFlow
	UserID    string // the user being linked; empty in the login flow
	Verifier  string // PKCE code verifier
	ExpiresAt time.Time
}

// ErrInvalidState is the cause of consuming a state token that is unknown, already
// consumed, expired or malformed.
var ErrInvalidState = errors.New("invalid OAuth state")

// RateDecision is the outcome of one rate-limited request.
type RateDecision struct {
	Allowed    bool
	Limit      int
	Remaining  int           // requests left in the window after this one
	Reset      time.Time     // end of the current window
	RetryAfter time.Duration // until Reset when refused; zero when allowed
}
