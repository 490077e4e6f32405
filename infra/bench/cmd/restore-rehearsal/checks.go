package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/shared/imageset"
	"github.com/mediacatalog/service/shared/postgres"
)

// check is one verdict of the rehearsal.
type check struct {
	name   string
	ok     bool
	detail string
}

// problems collects a check's failures, keeping the first few for the report.
type problems struct {
	n     int
	first []string
}

func (p *problems) add(format string, args ...any) {
	p.n++
	if len(p.first) < 3 {
		p.first = append(p.first, fmt.Sprintf(format, args...))
	}
}

func (p problems) verdict(name, summary string) check {
	if p.n == 0 {
		return check{name: name, ok: true, detail: summary}
	}
	return check{name: name, detail: fmt.Sprintf("%s; %d wrong: %s", summary, p.n, strings.Join(p.first, "; "))}
}

func (r *rehearsal) check(ctx context.Context) []check {
	return []check{
		r.checkPictures(ctx),
		r.checkUnnamed(ctx),
		r.checkSessions(ctx),
		r.checkBeforeT(ctx),
		r.checkAfterT(ctx),
		r.checkRevocations(ctx),
	}
}

// named are the pictures the restored rows name, by owner, id and reference.
func (r *rehearsal) named(ctx context.Context) (map[imageset.Owner][]postgres.NamedImage, error) {
	out := map[imageset.Owner][]postgres.NamedImage{}
	for _, owner := range []imageset.Owner{imageset.Users, imageset.Contributors} {
		var after int64
		for {
			rows, err := r.db.NamedImagesAfter(ctx, owner, after, 1000)
			if err != nil {
				return nil, err
			}
			out[owner] = append(out[owner], rows...)
			if len(rows) < 1000 {
				break
			}
			after = rows[len(rows)-1].ID
		}
	}
	return out, nil
}

// checkPictures: every picture a restored row names is served, both renditions, with
// the bytes of its objects; a workload user's high rendition is the one uploaded
// before T. A contributor's (the cdn serves users only) is a current object.
func (r *rehearsal) checkPictures(ctx context.Context) check {
	const name = "every picture a row names is served by the cdn"
	named, err := r.named(ctx)
	if err != nil {
		return check{name: name, detail: err.Error()}
	}
	uploaded := map[int64][32]byte{}
	for _, u := range r.w.users {
		if u.ref != "" {
			uploaded[u.id] = u.high
		}
	}
	var p problems
	for _, row := range named[imageset.Users] {
		set, err := imageset.ParseRef(row.Ref)
		if err != nil {
			p.add("user %d names %q", row.ID, row.Ref)
			continue
		}
		for _, res := range []string{imageset.High, imageset.Scaled} {
			st, body, err := send(ctx, http.MethodGet, fmt.Sprintf("%s/user/avatar/%d/%s", r.srv.base, row.ID, res), "", "")
			want, herr := r.objectHash(ctx, set.Key(res))
			switch {
			case err != nil || st != http.StatusOK:
				p.add("user %d %s: %d %v", row.ID, res, st, err)
			case herr != nil:
				p.add("user %d %s: no current object", row.ID, res)
			case sha256.Sum256(body) != want:
				p.add("user %d %s: the cdn serves other bytes than %s", row.ID, res, set.Key(res))
			case res == imageset.High && uploaded[row.ID] != [32]byte{} && uploaded[row.ID] != want:
				p.add("user %d: not the picture uploaded before T", row.ID)
			}
		}
	}
	for _, row := range named[imageset.Contributors] {
		set, err := imageset.ParseRef(row.Ref)
		if err != nil {
			p.add("contributor %d names %q", row.ID, row.Ref)
			continue
		}
		for _, k := range set.Keys() {
			if _, err := r.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)}); err != nil {
				p.add("contributor %d: %s: no current object", row.ID, k)
			}
		}
	}
	return p.verdict(name, fmt.Sprintf("%d users' and %d contributors' pictures", len(named[imageset.Users]), len(named[imageset.Contributors])))
}

// checkUnnamed: every current object of the bucket is a key of a picture a row names.
func (r *rehearsal) checkUnnamed(ctx context.Context) check {
	const name = "no object unnamed"
	named, err := r.named(ctx)
	if err != nil {
		return check{name: name, detail: err.Error()}
	}
	want := map[string]bool{}
	for _, rows := range named {
		for _, row := range rows {
			if set, err := imageset.ParseRef(row.Ref); err == nil {
				for _, k := range set.Keys() {
					want[k] = true
				}
			}
		}
	}
	var p problems
	objects := 0
	pages := s3.NewListObjectsV2Paginator(r.s3, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return check{name: name, detail: err.Error()}
		}
		for _, o := range page.Contents {
			objects++
			if !want[aws.ToString(o.Key)] {
				p.add("%s", aws.ToString(o.Key))
			}
		}
	}
	return p.verdict(name, fmt.Sprintf("%d current objects, %d keys named", objects, len(want)))
}

// checkSessions: no session issued before the restore is accepted; one issued after it
// is (the check can pass).
func (r *rehearsal) checkSessions(ctx context.Context) check {
	const name = "no session from before the restore accepted"
	var p problems
	for _, t := range r.w.tokens {
		// 401: the session is refused; 404: its user is gone (a deletion).
		st, _, err := send(ctx, http.MethodGet, r.srv.base+"/admin-users?limit=1", "", t.value)
		if err != nil || st != http.StatusUnauthorized && st != http.StatusNotFound {
			p.add("user %d's session of the %s: %d %v", t.user, t.when, st, err)
		}
	}
	fresh, err := r.sessions.Issue(ctx, demo.AdminUserID)
	if err != nil {
		p.add("a session after the restore: %v", err)
	} else if st, _, err := send(ctx, http.MethodGet, r.srv.base+"/admin-users?limit=1", "", fresh.Refresh); err != nil || st != http.StatusOK {
		p.add("the admin's session issued after the restore: %d %v", st, err)
	}
	return p.verdict(name, fmt.Sprintf("%d sessions issued before (set-up, phase A, phase B) refused; one after it accepted", len(r.w.tokens)))
}

// rows are the writer's rows the restored database holds.
func (r *rehearsal) rows(ctx context.Context) (map[int64]time.Time, error) {
	rows, err := r.db.Pool.Query(ctx, `SELECT n, sent_at FROM rehearsal_writes`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]time.Time{}
	for rows.Next() {
		var n int64
		var at time.Time
		if err := rows.Scan(&n, &at); err != nil {
			return nil, err
		}
		out[n] = at
	}
	return out, rows.Err()
}

// checkBeforeT: every write acknowledged before T is in the restored database: the
// writer's rows, phase A's renames, pictures and deletions.
func (r *rehearsal) checkBeforeT(ctx context.Context) check {
	const name = "acknowledged writes before T present"
	held, err := r.rows(ctx)
	if err != nil {
		return check{name: name, detail: err.Error()}
	}
	var p problems
	before := 0
	for n, at := range r.w.writes.acked {
		if at.Before(r.w.point) {
			before++
			if _, ok := held[n]; !ok {
				p.add("row %d acknowledged %s before T", n, r.w.point.Sub(at).Round(time.Millisecond))
			}
		}
	}
	for _, u := range r.w.users {
		var username, ref string
		err := r.db.Pool.QueryRow(ctx, `SELECT username, coalesce(profile_image, '') FROM users WHERE id = $1`, u.id).Scan(&username, &ref)
		switch {
		case u.gone && err == nil:
			if u.kind == deleteUserA {
				p.add("user %d, deleted before T, is there", u.id)
			}
		case u.gone:
		case err != nil:
			p.add("user %d: %v", u.id, err)
		case username != u.name:
			p.add("user %d is named %q, was %q at T", u.id, username, u.name)
		case ref != u.ref:
			p.add("user %d's picture %q, was %q at T", u.id, ref, u.ref)
		}
	}
	return p.verdict(name, fmt.Sprintf("%d writer rows, %d renames, %d users' pictures and deletions as at T", before, r.w.renamesA, len(r.w.users)))
}

// checkAfterT: no write sent after T is in the restored database (its revocations
// aside): the writer's rows, phase B's renames and pictures.
func (r *rehearsal) checkAfterT(ctx context.Context) check {
	const name = "writes after T absent"
	held, err := r.rows(ctx)
	if err != nil {
		return check{name: name, detail: err.Error()}
	}
	var p problems
	after := 0
	for n, at := range r.w.writes.sent {
		if at.After(r.w.point) {
			after++
			if _, ok := held[n]; ok {
				p.add("row %d sent %s after T", n, at.Sub(r.w.point).Round(time.Millisecond))
			}
		}
	}
	stale := 0
	for _, u := range r.w.users {
		var username, ref string
		if err := r.db.Pool.QueryRow(ctx, `SELECT username, coalesce(profile_image, '') FROM users WHERE id = $1`, u.id).Scan(&username, &ref); err != nil {
			continue // checked with the revocations and the writes before T
		}
		if strings.HasSuffix(username, "_b") {
			p.add("user %d has phase B's name %q", u.id, username)
		}
		stale += len(u.staleRef)
		if slices.Contains(u.staleRef, ref) {
			p.add("user %d names %s, uploaded after T", u.id, ref)
		}
	}
	return p.verdict(name, fmt.Sprintf("%d writer rows, %d renames and %d uploads after T", after, r.w.renamesB, stale))
}

// checkRevocations: the user deletions and forced logouts after T are made again.
func (r *rehearsal) checkRevocations(ctx context.Context) check {
	const name = "revocations after T made again"
	var p problems
	deleted, loggedOut := 0, 0
	for _, u := range r.w.users {
		switch {
		case u.kind == deleteUserB:
			deleted++
			var n int64
			if err := r.db.Pool.QueryRow(ctx, `SELECT count(*) FROM users WHERE id = $1`, u.id).Scan(&n); err != nil || n != 0 {
				p.add("user %d, deleted after T, is there (%v)", u.id, err)
			}
		case u.loggedOut:
			loggedOut++
			var n int64
			if err := r.db.Pool.QueryRow(ctx, `SELECT count(*) FROM sessions WHERE user_id = $1 AND revoked_at IS NULL`, u.id).Scan(&n); err != nil || n != 0 {
				p.add("user %d, logged out after T, has %d live sessions (%v)", u.id, n, err)
			}
		}
	}
	return p.verdict(name, fmt.Sprintf("%d user deletions, %d forced logouts", deleted, loggedOut))
}

// rpo is how long before T the newest restored write was sent, and the span of the
// writes sent after T.
func (r *rehearsal) rpo() (rpo, lost time.Duration) {
	held, err := r.rows(context.Background())
	if err != nil {
		return 0, 0
	}
	var newest, last time.Time
	for _, at := range held {
		if at.After(newest) {
			newest = at
		}
	}
	for _, at := range r.w.writes.sent {
		if at.After(last) {
			last = at
		}
	}
	return r.w.point.Sub(newest), last.Sub(r.w.point)
}
