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
	// MsgRecentLoginRequired is the 401 of an unlink by a session signed in too long
	// ago: the frontend sends the user through a login, then unlinks.
	MsgRecentLoginRequired = "Recent login required"
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
	// ErrLoginMoved: a login found the provider account linked to a user, but the link
	// was gone (a forced logout removed it) by the time the session was to start.
	ErrLoginMoved = errors.New("the provider account's link changed during the login")
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

// LinkRemoved is a provider link that a forced logout removed.
type LinkRemoved struct {
	Provider         string
	ProviderUsername string
}

// What a forced logout did with a link that a revoked session had unlinked
// (LinkRestored.Outcome).
const (
	// RestoreRestored: the link is the user's again.
	RestoreRestored = "restored"
	// RestoreMoved: the provider account had signed up another user (OtherUser) after
	// the unlink, a user holding nothing but the default role: the link moved back to
	// the user it was unlinked from, and the other user lost it.
	RestoreMoved = "moved"
	// RestoreLinkedElsewhere: the provider account is another user's (OtherUser), who
	// keeps it; the link stays pending and a later forced logout puts it back once the
	// account is free.
	RestoreLinkedElsewhere = "linked_elsewhere"
	// RestoreAlreadyLinked: the user has another account of that provider linked;
	// the link stays pending.
	RestoreAlreadyLinked = "already_linked"
)

// LinkRestored is a provider link that a revoked session had unlinked, and what the
// forced logout did with it.
type LinkRestored struct {
	Provider         string
	ProviderUsername string
	Outcome          string // one of the Restore* values
	OtherUser        int64  // with RestoreMoved and RestoreLinkedElsewhere
}

// Logout is what a forced logout did besides revoking the sessions: the provider links
// that revoked sessions (of this logout and earlier ones) made, which it removed, the
// links that they unlinked, which it put back where it could, and the ways to log in
// the account has left ("password" and the linked providers; none when empty).
type Logout struct {
	Removed  []LinkRemoved
	Restored []LinkRestored
	Left     []string
}

// UserLink is a provider linked to a user, as the admin's user detail lists it.
type UserLink struct {
	Provider         string    `json:"provider"`
	ProviderUsername string    `json:"provider_username"`
	LinkedAt         time.Time `json:"linked_at"`
	// BySession is true for a link a session made (a link from the account's
	// settings), which a forced logout removes; false for the provider account the
	// user signed up with (or put back by a forced logout), which it keeps.
	BySession bool `json:"by_session"`
}
