package adminusers

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/audit"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
)

// The success messages, word for word as the OpenAPI document gives them.
const (
	MsgUserEdited    = "User edited successfully"
	MsgUserDeleted   = "User deleted successfully"
	MsgUserLoggedOut = "User logged out successfully"
)

// userList is the envelope of GET /admin-users.
type userList struct {
	Users []catalog.UserListItem `json:"users"`
	Max   int64                  `json:"max"`
	// MaxExact is false when max is a lower bound: a search or filter past its
	// threshold of exactly counted matches.
	MaxExact bool  `json:"max_exact"`
	From     int64 `json:"from"`
	To       int64 `json:"to"`
}

// handleUsers answers GET /admin-users: a page of users, filtered by a substring of
// the username (search) and a role id (role), in one of the four orders.
func handleUsers(store Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, page, err := userQuery(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		res, err := store.Users(r.Context(), q)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		out := userList{Users: res.Users, MaxExact: res.Exact}
		out.Max, out.From, out.To = page.Envelope(res.Total, len(res.Users))
		httpapi.JSON(w, r, http.StatusOK, out)
	})
}

func userQuery(r *http.Request) (catalog.UserQuery, httpapi.Page, error) {
	order, err := httpapi.Order(r, catalog.UserOrderNameAsc, catalog.UserOrders...)
	if err != nil {
		return catalog.UserQuery{}, httpapi.Page{}, err
	}
	page, err := httpapi.Paging(r)
	if err != nil {
		return catalog.UserQuery{}, httpapi.Page{}, err
	}
	search, err := httpapi.Search(r)
	if err != nil {
		return catalog.UserQuery{}, httpapi.Page{}, err
	}
	q := catalog.UserQuery{Order: order, Search: search, Limit: page.Limit, Offset: page.Offset}
	if v := r.URL.Query().Get("role"); v != "" {
		var ok bool
		if q.Role, ok = httpapi.CanonicalID(v); !ok {
			return catalog.UserQuery{}, httpapi.Page{}, apperr.MissingParams()
		}
	}
	return q, page, nil
}

// handleUser answers GET /admin-users/id/{id}: the user's detail. A reader who may
// edit users also takes (or refreshes) the user's edit lock, unless another editor
// holds a live one.
func handleUser(store Store, lockTTL time.Duration) http.Handler {
	// A closure, not the method value store.User: routes are listed before a store is
	// given (the route tests list them without one).
	return auth.LockingDetail(auth.PermEditUsers, lockTTL, func(ctx context.Context, id int64, lock catalog.LockRequest) (catalog.User, error) {
		return store.User(ctx, id, lock)
	})
}

// editUserRequest is the body of POST /admin-users/edit/{id}.
type editUserRequest struct {
	Username     *string `json:"username"`
	AgeVerified  *bool   `json:"age_verified"`
	AddedRoles   []int64 `json:"added_roles"`
	RemovedRoles []int64 `json:"removed_roles"`
}

// Validate demands a non-blank username, a Name of at most catalog.MaxUsername
// characters.
func (req *editUserRequest) Validate() error {
	if req.Username == nil {
		return apperr.MissingParams()
	}
	if err := httpapi.Required(*req.Username); err != nil {
		return err
	}
	return httpapi.Text("username", strings.TrimSpace(*req.Username), catalog.MaxUsername, httpapi.Name)
}

// handleEditUser answers POST /admin-users/edit/{id}: renames the user, sets their age
// verification (default false) and adds and removes roles, all or nothing. It ends the
// editor's edit lock of the user.
func handleEditUser(store Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := httpapi.PathInt(r, "id")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		req, err := httpapi.Decode[editUserRequest](w, r, 0)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		p, _ := auth.FromContext(r.Context())
		edit := catalog.UserEdit{
			Username:     strings.TrimSpace(*req.Username),
			AgeVerified:  req.AgeVerified != nil && *req.AgeVerified,
			AddedRoles:   req.AddedRoles,
			RemovedRoles: req.RemovedRoles,
		}
		res, err := store.EditUser(r.Context(), id, p.UserID, edit)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		audit.Record(r.Context(), "user.edit", "user", id, userChanges(res)...)
		httpapi.OK(w, r, MsgUserEdited)
	})
}

// handleDeleteUser answers DELETE /admin-users/delete/{id}: the user and everything
// that is theirs go, irreversibly. Once the deletion committed, every version of their
// stored pictures is removed and CloudFront's copies invalidated, when images is set
// (Images.PurgeUsers); a deletion of a user already gone (a retry after a crash that
// followed the commit) finishes that purge too, and answers 404 as the contract says.
func handleDeleteUser(store Store, images Images) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := httpapi.PathInt(r, "id")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		p, _ := auth.FromContext(r.Context())
		err = store.DeleteUser(r.Context(), id, p.UserID)
		if err == nil {
			audit.Record(r.Context(), "user.delete", "user", id)
		}
		if e, ok := apperr.As(err); images != nil && (err == nil || ok && e.Code == apperr.NotFound) {
			if perr := images.PurgeUsers(r.Context(), id); perr != nil {
				httpapi.Logger(r.Context()).Error("purge the pictures of a deleted user", "user_id", id, "error", perr.Error())
			}
		}
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.OK(w, r, MsgUserDeleted)
	})
}

// handleLogoutUser answers POST /admin-users/logout/{id}: every session of the user is
// revoked, so their refresh tokens stop working at once, and what revoked sessions did
// to the account's provider links is undone (postgres.DB.LogoutUser): the links they
// made are removed, each a user.unlink record, and the links they unlinked are put
// back, each a user.restore-link record (a link moved back from another user is also
// a user.unlink record of that user). The user.logout record lists what it removed and
// put back and the ways to log in left.
func handleLogoutUser(store Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := httpapi.PathInt(r, "id")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		p, _ := auth.FromContext(r.Context())
		out, err := store.LogoutUser(r.Context(), id, p.UserID)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		removed, restored := []string{}, []string{}
		for _, l := range out.Removed {
			removed = append(removed, l.Provider)
		}
		for _, l := range out.Restored {
			if l.Outcome == catalog.RestoreRestored || l.Outcome == catalog.RestoreMoved {
				restored = append(restored, l.Provider)
			}
		}
		left := out.Left
		if left == nil {
			left = []string{}
		}
		audit.Record(r.Context(), "user.logout", "user", id, slog.Any("removed_links", removed),
			slog.Any("restored_links", restored), slog.Any("login_methods", left))
		for _, l := range out.Removed {
			audit.Record(r.Context(), "user.unlink", "user", id, slog.String("provider", l.Provider),
				slog.String("provider_username", l.ProviderUsername), slog.String("by", "logout"))
		}
		for _, l := range out.Restored {
			attrs := []slog.Attr{slog.String("provider", l.Provider), slog.String("provider_username", l.ProviderUsername),
				slog.String("by", "logout"), slog.String("outcome", l.Outcome)}
			if l.OtherUser != 0 {
				attrs = append(attrs, slog.Int64("other_user", l.OtherUser))
			}
			audit.Record(r.Context(), "user.restore-link", "user", id, attrs...)
			if l.Outcome == catalog.RestoreMoved {
				audit.Record(r.Context(), "user.unlink", "user", l.OtherUser, slog.String("provider", l.Provider),
					slog.String("provider_username", l.ProviderUsername), slog.String("by", "logout"),
					slog.Int64("moved_to_user", id))
			}
		}
		httpapi.OK(w, r, MsgUserLoggedOut)
	})
}

// userChanges are the attributes of an edit's audit record: each field it changed
// with its value before and after, and the roles it really granted and took away.
func userChanges(res catalog.UserEditResult) []slog.Attr {
	var out []slog.Attr
	if res.Before.Username != res.After.Username {
		out = append(out, audit.Change("username", res.Before.Username, res.After.Username))
	}
	if res.Before.AgeVerified != res.After.AgeVerified {
		out = append(out, audit.Change("age_verified", res.Before.AgeVerified, res.After.AgeVerified))
	}
	return append(out, slog.Any("added_roles", audit.IDs(res.AddedRoles)),
		slog.Any("removed_roles", audit.IDs(res.RemovedRoles)))
}
