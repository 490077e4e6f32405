package catalog

import (
	"errors"
	"time"
)

// Messages of the OAuth connection routes (the OpenAPI document gives them).
const (
	MsgUnsupportedProvider = "Unsupported provider"
	MsgProviderUnlinked    = "Provider unlinked successfully"
	MsgProviderNotLinked   = "Provider not linked"
	MsgOnlyLoginMethod     = "Cannot unlink the only login method"
	MsgProviderInUse       = "This provider account is linked to another user"
	MsgAlreadyLinked       = "This provider is already linked to the account"
)

// The link conflicts, wrapped in an apperr.Conflict by the store: the OAuth routes
// turn them into the link_error reasons provider_in_use and already_linked.
var (
	// ErrProviderInUse: the provider account is linked to another user.
	ErrProviderInUse = errors.New("provider account linked to another user")
	// ErrAlreadyLinked: the user already has an account of that provider linked.
	ErrAlreadyLinked = errors.New("provider already linked to the user")
)

// Connection is one linked provider account as the connections list shows it.
type Connection struct {
	Provider         string  `json:"provider"`
	ProviderUsername string  `json:"provider_username"`
	ProviderEmail    *string `json:"provider_email"`
	// LinkedAt encodes as an RFC 3339 (ISO 8601) timestamp.
	LinkedAt time.Time `json:"linked_at"`
}

// ProviderAccount is a user's account at an identity provider, as its profile
// describes it at a login or a link. Accounts are matched by Provider and
// ProviderUserID only, never by email.
type ProviderAccount struct {
	Provider       string
	ProviderUserID string
	// Username is the provider's display name.
	Username string
	// UsernameBase is the slug a new user's username and slug start from, made from
	// Username by the oauth group; "" is "<provider>-user".
	UsernameBase string
	Email        *string
	AvatarURL    *string
}

// OAuthLogin is the user an OAuth login signs in: the user the provider account is
// linked to, or a user created for it (Created).
type OAuthLogin struct {
	UserID   int64
	Username string
	Created  bool
}

// LinkRemoved is a provider link that a forced logout removed (or kept).
type LinkRemoved struct {
	Provider         string
	ProviderUsername string
}

// Logout is what a forced logout did besides revoking the sessions: the provider links
// of those sessions it removed, and the one it kept as the account's last way to log
// in (nil when none was kept).
type Logout struct {
	Removed []LinkRemoved
	Kept    *LinkRemoved
}
