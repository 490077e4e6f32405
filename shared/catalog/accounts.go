package catalog

import "time"

// LockHolder is the user who holds the live edit lock of a user or a contributor.
type LockHolder struct {
	ID       int64  `json:"id"`
	Username string `json:"username"`
}

// LockRequest asks a detail read to take the entity's edit lock for user By, or to
// refresh it when By already holds it, for TTL. The zero value takes no lock: readers
// without the group's edit permission only look.
type LockRequest struct {
	By  int64
	TTL time.Duration
}

// SessionUser is the user behind a live session, with every permission their roles
// grant (each once), and when the session began: its sign-in (every session starts
// with one).
type SessionUser struct {
	ID          int64
	Username    string
	Permissions []string
	SignedInAt  time.Time
}

// UserRole is a role as the user list shows it: a missing description is "".
type UserRole struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// UserDetailRole is a role as the user detail shows it: description may be null.
type UserDetailRole struct {
	ID          int64   `json:"id"`
	Name        string  `json:"name"`
	Description *string `json:"description"`
}

// UserListItem is one user in the administrative list.
type UserListItem struct {
	ID          int64  `json:"id"`
	Slug        string `json:"slug"`
	Username    string `json:"username"`
	AgeVerified bool   `json:"age_verified"`
	// ProfileImage is the stored image's key, "" when the user has none.
	ProfileImage string     `json:"profile_image"`
	Registered   time.Time  `json:"registered"`
	Roles        []UserRole `json:"roles"`
	// Lock is the holder of the live edit lock, nil when nobody edits the user.
	Lock *LockHolder `json:"lock"`
}

// User is the administrative detail of a user.
type User struct {
	ID          int64  `json:"id"`
	Slug        string `json:"slug"`
	Username    string `json:"username"`
	AgeVerified bool   `json:"age_verified"`
	// ProfileImage is the stored image's key, nil when the user has none.
	ProfileImage *string          `json:"profile_image"`
	Registered   time.Time        `json:"registered"`
	Roles        []UserDetailRole `json:"roles"`
	// LoggedIn reports whether the user has a live (unrevoked, unexpired) session.
	LoggedIn bool `json:"logged_in"`
	// LinkedProviders are the provider accounts the user logs in with, by provider.
	LinkedProviders []UserLink `json:"linked_providers"`
}

// Orders of the user list; name is the username.
const (
	UserOrderNameAsc        = "name-asc"
	UserOrderNameDesc       = "name-desc"
	UserOrderRegisteredAsc  = "registered-asc"
	UserOrderRegisteredDesc = "registered-desc"
)

// UserOrders are the order values the user list accepts.
var UserOrders = []string{UserOrderNameAsc, UserOrderNameDesc, UserOrderRegisteredAsc, UserOrderRegisteredDesc}

// UserQuery selects a page of users.
type UserQuery struct {
	// Order is one of UserOrders; "" is name-asc.
	Order string
	// Search is a case-insensitive substring of the username; "" matches every user.
	Search string
	// Role keeps the users holding that role; 0 keeps all.
	Role   int64
	Limit  int64
	Offset int64
}

// UserPage is one page of users with the number of all that match: exact when Exact,
// else a lower bound (a search or filter past its exact threshold).
type UserPage struct {
	Total int64
	Exact bool
	Users []UserListItem
}

// UserEdit is an edit of a user, applied at once or not at all. Removed roles are
// taken away before added ones are granted; a user left without any role gets the
// default role.
type UserEdit struct {
	Username     string
	AgeVerified  bool
	AddedRoles   []int64
	RemovedRoles []int64
}

// UserEditResult is what an edit of a user changed: the username and age verification
// before and after, and the roles it really granted and took away (a role asked for
// that the user held already, or removed that they lacked, is no change; the default
// role given to a user left without one is among the granted). For the audit record.
type UserEditResult struct {
	Before, After UserFacts
	AddedRoles    []int64
	RemovedRoles  []int64
}

// UserFacts are the editable facts of a user account.
type UserFacts struct {
	Username    string
	AgeVerified bool
}

// RoleEditResult is what an edit of a role changed: the name and description before
// and after, and the permissions it really added and removed.
type RoleEditResult struct {
	Before, After      RoleFacts
	AddedPermissions   []int64
	RemovedPermissions []int64
}

// RoleFacts are the editable texts of a role.
type RoleFacts struct {
	Name        string
	Description *string
}

// Role is one role in the role list.
type Role struct {
	ID              int64   `json:"id"`
	Name            string  `json:"name"`
	Description     *string `json:"description"`
	PermissionCount int64   `json:"permission_count"`
	UserCount       int64   `json:"user_count"`
}

// RoleDetail is a role with its permissions. IsDefault is 1 for the default role,
// 0 otherwise.
type RoleDetail struct {
	ID          int64        `json:"id"`
	Name        string       `json:"name"`
	Description *string      `json:"description"`
	IsDefault   int          `json:"is_default"`
	Permissions []Permission `json:"permissions"`
}

// RoleEdit is an edit of a role, applied at once or not at all. Description is
// changed only when SetDescription is true (nil clears it).
type RoleEdit struct {
	Name               string
	SetDescription     bool
	Description        *string
	AddedPermissions   []int64
	RemovedPermissions []int64
}

// NewRole is a role to add.
type NewRole struct {
	Name        string
	Description string
}

// Permission is a named right that roles grant.
type Permission struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// PermissionInput is the name and description of a permission to add or edit.
type PermissionInput struct {
	Name        string
	Description string
}
