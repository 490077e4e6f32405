// Package restore holds what a point-in-time restore of the database must do to it
// before the service answers from it (make restore-revocations; docs/operations.md):
// end every session issued before the restore (the sessions-valid-after mark), and make
// again the revocations made after the restore point, which the restored rows undid,
// as the audit records after that point name them. The records are the functions'
// structured log lines (shared/audit), kept in CloudWatch Logs, so they outlive the
// database they describe.
//
// What is made again is driven by each record's action (revocations below): forced
// logouts, link removals, roles and permissions taken away, deleted users. A grant
// after the restore point (a role or permission given, a link made) is not made again,
// since nothing revoked may come back by it: it is listed, with what the operator runs to
// make it again if it is still wanted.
package restore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/audit"
	"github.com/mediacatalog/service/shared/postgres"
)

// Record is an audit record, as shared/audit writes it.
type Record struct {
	Time    time.Time `json:"time"`
	Msg     string    `json:"msg"`
	ActorID int64     `json:"actor_id"`
	Action  string    `json:"action"`
	Target  struct {
		Kind string
		ID   int64
	} `json:"target"`
	Changes map[string]json.RawMessage `json:"changes"`
}

// ids reads a list of ids of the record's changes (none when absent).
func (r Record) ids(name string) []int64 {
	var v []int64
	_ = json.Unmarshal(r.Changes[name], &v)
	return v
}

// text reads a text of the record's changes ("" when absent).
func (r Record) text(name string) string {
	var v string
	_ = json.Unmarshal(r.Changes[name], &v)
	return v
}

// maxLine bounds one log line (an audit record's values are bounded: audit.MaxValue).
const maxLine = 1 << 20

// Read returns the audit records among the lines of r: each line a record as a
// function logs it, or a log event whose "message" is one (CloudWatch Logs' shape).
// Other lines (requests, errors) are skipped.
func Read(r io.Reader) ([]Record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxLine)
	var out []Record
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		var rec Record
		if json.Unmarshal(line, &rec) != nil {
			continue
		}
		if rec.Msg != audit.Message {
			var event struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(line, &event) != nil || json.Unmarshal([]byte(event.Message), &rec) != nil || rec.Msg != audit.Message {
				continue
			}
		}
		if rec.Action == "" || rec.Time.IsZero() {
			continue
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the audit records: %w", err)
	}
	return out, nil
}

// Result is what Apply did and what it leaves to the operator.
type Result struct {
	Cutoff  time.Time
	Applied []string // one line per revocation made again
	ByHand  []string // one line per grant not made again, with its command
	Others  map[string]int
}

// revocation makes again what one record revoked and describes it.
type revocation func(ctx context.Context, db *postgres.DB, r Record) (string, error)

// revocations are the actions whose records are made again.
var revocations = map[string]revocation{
	// The sessions it revoked are before the mark already; revoked, they also leave
	// the user's "logged in" flag and a later forced logout's link removals right.
	"user.logout": func(ctx context.Context, db *postgres.DB, r Record) (string, error) {
		n, err := db.RevokeSessions(ctx, r.Target.ID)
		return fmt.Sprintf("forced logout of user %d: %d sessions revoked", r.Target.ID, n), err
	},
	// A user's unlink and each link a forced logout removed.
	"user.unlink": func(ctx context.Context, db *postgres.DB, r Record) (string, error) {
		p := r.text("provider")
		had, err := db.RemoveLink(ctx, r.Target.ID, p)
		return fmt.Sprintf("%s link of user %d removed: %s", p, r.Target.ID, did(had)), err
	},
	"user.edit": func(ctx context.Context, db *postgres.DB, r Record) (string, error) {
		removed := r.ids("removed_roles")
		if len(removed) == 0 {
			return "", nil
		}
		held, err := db.RemoveUserRoles(ctx, r.Target.ID, removed)
		return fmt.Sprintf("roles %v of user %d taken away: %v held", removed, r.Target.ID, held), err
	},
	"role.edit": func(ctx context.Context, db *postgres.DB, r Record) (string, error) {
		removed := r.ids("removed_permissions")
		if len(removed) == 0 {
			return "", nil
		}
		had, err := db.RemoveRolePermissions(ctx, r.Target.ID, removed)
		return fmt.Sprintf("permissions %v of role %d taken away: %v held", removed, r.Target.ID, had), err
	},
	"user.delete": func(ctx context.Context, db *postgres.DB, r Record) (string, error) {
		_, err := db.PurgeUser(ctx, r.Target.ID)
		if apperr.CodeOf(err) == apperr.NotFound {
			return fmt.Sprintf("user %d deleted: already gone", r.Target.ID), nil
		}
		return fmt.Sprintf("user %d deleted (make reconcile-images removes their pictures)", r.Target.ID), err
	},
}

// byHand says how to make again a grant that Apply leaves out ("" when r grants nothing).
func byHand(r Record) string {
	at := r.Time.UTC().Format(time.RFC3339)
	switch r.Action {
	case "user.edit":
		var cmds []string
		for _, id := range r.ids("added_roles") {
			cmds = append(cmds, fmt.Sprintf("make grant-role USER_ID=%d ROLE_ID=%d", r.Target.ID, id))
		}
		if len(cmds) > 0 {
			return fmt.Sprintf("%s: roles given to user %d by user %d: %s", at, r.Target.ID, r.ActorID, strings.Join(cmds, "; "))
		}
	case "role.edit":
		if added := r.ids("added_permissions"); len(added) > 0 {
			return fmt.Sprintf("%s: permissions %v given to role %d by user %d: POST /admin-roles/edit/%d with added_permissions %v",
				at, added, r.Target.ID, r.ActorID, r.Target.ID, added)
		}
	case "role.add", "permission.add":
		return fmt.Sprintf("%s: %s %d added by user %d: add it again through the API", at, r.Target.Kind, r.Target.ID, r.ActorID)
	case "role.delete":
		return fmt.Sprintf("%s: role %d deleted by user %d: DELETE /admin-roles/delete/%d", at, r.Target.ID, r.ActorID, r.Target.ID)
	case "permission.delete":
		return fmt.Sprintf("%s: permission %d deleted by user %d: DELETE /admin-permissions/delete/%d", at, r.Target.ID, r.ActorID, r.Target.ID)
	case "user.restore-link":
		// The link a forced logout put back (an unlink by a revoked session) is not in a
		// database restored to before it; the same logout, forced again, puts it back.
		return fmt.Sprintf("%s: user %d's %s link put back by a forced logout: POST /admin-users/logout/%d again",
			at, r.Target.ID, r.text("provider"), r.Target.ID)
	case "user.link":
		return fmt.Sprintf("%s: user %d linked %s: not in the restored database; they link it again", at, r.Target.ID, r.text("provider"))
	}
	return ""
}

func did(had bool) string {
	if had {
		return "done"
	}
	return "already gone"
}

// Options adjust Apply.
type Options struct {
	// KeepSessions leaves the sessions-valid-after mark as it is: only the restore
	// rehearsal sets it, to show what the mark prevents.
	KeepSessions bool
}

// Apply sets the sessions-valid-after mark on db, then makes again, in the order they
// were made, the revocations of the records after after, and lists the grants after it
// and a count of the other writes after it (which the restore undid for good).
func Apply(ctx context.Context, db *postgres.DB, records []Record, after time.Time, o Options) (Result, error) {
	var res Result
	var err error
	if !o.KeepSessions {
		if res.Cutoff, err = db.SetSessionCutoff(ctx); err != nil {
			return res, err
		}
	}
	res.Others = map[string]int{}
	later := slices.DeleteFunc(slices.Clone(records), func(r Record) bool { return !r.Time.After(after) })
	sort.SliceStable(later, func(i, j int) bool { return later[i].Time.Before(later[j].Time) })
	for _, r := range later {
		if line := byHand(r); line != "" {
			res.ByHand = append(res.ByHand, line)
		}
		redo, ok := revocations[r.Action]
		if !ok {
			if byHand(r) == "" && r.Action != "refused" {
				res.Others[r.Action]++
			}
			continue
		}
		line, err := redo(ctx, db, r)
		if err != nil {
			return res, fmt.Errorf("make again %s of %s %d (%s): %w", r.Action, r.Target.Kind, r.Target.ID, r.Time.Format(time.RFC3339Nano), err)
		}
		if line != "" {
			res.Applied = append(res.Applied, r.Time.UTC().Format(time.RFC3339)+": "+line)
		}
	}
	admin, err := db.AnyFullAdmin(ctx)
	if err != nil {
		return res, err
	}
	if !admin {
		res.ByHand = append(res.ByHand, "no user holds a full-admin role now: make grant-role FIND=<name>, then make grant-role USER_ID=<id> ROLE_ID=<a full-admin role>")
	}
	return res, nil
}

// Write prints res for the operator.
func (res Result) Write(w io.Writer) {
	if res.Cutoff.IsZero() {
		fmt.Fprintln(w, "sessions-valid-after mark left as it was: the sessions issued before the restore are still accepted")
	} else {
		fmt.Fprintf(w, "sessions valid after %s: every session issued before is refused\n", res.Cutoff.UTC().Format(time.RFC3339Nano))
	}
	fmt.Fprintf(w, "revocations after the restore point made again: %d\n", len(res.Applied))
	for _, l := range res.Applied {
		fmt.Fprintln(w, "  "+l)
	}
	fmt.Fprintf(w, "grants after the restore point, not made again (run what is still wanted): %d\n", len(res.ByHand))
	for _, l := range res.ByHand {
		fmt.Fprintln(w, "  "+l)
	}
	if len(res.Others) > 0 {
		var parts []string
		for _, a := range slices.Sorted(maps.Keys(res.Others)) {
			parts = append(parts, fmt.Sprintf("%s %d", a, res.Others[a]))
		}
		fmt.Fprintln(w, "other writes after the restore point, not in the restored database: "+strings.Join(parts, ", "))
	}
}
