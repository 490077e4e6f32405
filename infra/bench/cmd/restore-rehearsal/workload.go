package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"sync"
	"time"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/shared/imageset"
	"github.com/mediacatalog/service/shared/namekey"
	"github.com/mediacatalog/service/shared/postgres"
)

// kinds of change, each a user's (user i does kind i % kinds): before the restore
// point T (phase A, after the base backup) and after it (phase B).
const (
	replaceBoth   = iota // a new picture in A and again in B
	deleteThenAdd        // picture deleted in A, a new one in B
	deleteUserA          // user deleted in A
	logoutARename        // forced logout in A, renamed in B
	renameTwice          // renamed in A and in B, logs in after T
	loginADeleteB        // logs in in A, picture deleted in B
	deleteUserB          // user deleted in B
	logoutB              // forced logout in B
	kinds
)

// wuser is a workload user and what the restored database must say of them.
type wuser struct {
	id        int64
	kind      int
	name      string   // the username at T
	ref       string   // the picture at T ("" none)
	high      [32]byte // the SHA-256 of its high rendition
	gone      bool     // absent after the restore
	loggedOut bool     // a forced logout after T: no live session after the restore
	staleRef  []string // references of pictures uploaded after T (no row may name them)
}

// token is a session issued during the workload, which no restored service may accept.
type token struct {
	value string
	user  int64
	when  string
}

// ledger is what the workload did.
type ledger struct {
	users    []*wuser
	tokens   []token
	point    time.Time // T
	writes   *writer
	renamesA int
	renamesB int
}

// workload runs the set-up, the base backup, phase A, T, phase B and the archive of
// the last WAL.
func (r *rehearsal) workload(ctx context.Context) error {
	admin, err := r.login(ctx, demo.AdminUserID, "set-up")
	if err != nil {
		return err
	}
	r.w.writes = &writer{db: r.db}
	r.w.writes.start(ctx)
	err = r.timed(fmt.Sprintf("set-up: %d users, a picture each, a session each", r.o.users), func() error {
		tag := time.Now().UTC().Format("150405")
		for i := 0; i < r.o.users; i++ {
			u := &wuser{kind: i % kinds, name: fmt.Sprintf("rehearsal_%s_%d", tag, i)}
			if err := r.db.Pool.QueryRow(ctx, `INSERT INTO users (slug, username, name_key) VALUES ($1, $2, $3) RETURNING id`,
				"rehearsal-"+tag+"-"+fmt.Sprint(i), u.name, namekey.Key(u.name)).Scan(&u.id); err != nil {
				return err
			}
			r.w.users = append(r.w.users, u)
			if err := r.upload(ctx, admin, u, false); err != nil {
				return err
			}
			if _, err := r.login(ctx, u.id, "set-up"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := r.timed("base backup (pg_basebackup)", func() error { return r.baseBackup(ctx) }); err != nil {
		return err
	}
	adminA, err := r.login(ctx, demo.AdminUserID, "phase A")
	if err != nil {
		return err
	}
	err = r.timed("phase A, before T: uploads, picture deletes, user deletes, forced logouts, renames, logins", func() error {
		for _, u := range r.w.users {
			if err := r.phaseA(ctx, adminA, u); err != nil {
				return fmt.Errorf("user %d: %w", u.id, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// T: every write of phase A is acknowledged before it, none of phase B's sent.
	time.Sleep(20 * time.Millisecond)
	r.w.point = time.Now()
	time.Sleep(20 * time.Millisecond)
	adminB, err := r.login(ctx, demo.AdminUserID, "phase B")
	if err != nil {
		return err
	}
	err = r.timed("phase B, after T: the same kinds of change", func() error {
		for _, u := range r.w.users {
			if err := r.phaseB(ctx, adminB, u); err != nil {
				return fmt.Errorf("user %d: %w", u.id, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.w.writes.stop()
	if r.w.writes.err != nil {
		return fmt.Errorf("the writer: %w", r.w.writes.err)
	}
	return r.timed("archive the last WAL segment", func() error { return r.archiveAll(ctx) })
}

func (r *rehearsal) phaseA(ctx context.Context, admin string, u *wuser) error {
	switch u.kind {
	case replaceBoth:
		return r.upload(ctx, admin, u, false)
	case deleteThenAdd:
		u.ref = ""
		return r.call(ctx, admin, "DELETE", fmt.Sprintf("/admin-users/delete-image/%d", u.id), nil)
	case deleteUserA:
		u.gone = true
		return r.call(ctx, admin, "DELETE", fmt.Sprintf("/admin-users/delete/%d", u.id), nil)
	case logoutARename:
		return r.call(ctx, admin, "POST", fmt.Sprintf("/admin-users/logout/%d", u.id), nil)
	case renameTwice:
		u.name += "_a"
		r.w.renamesA++
		return r.call(ctx, admin, "POST", fmt.Sprintf("/admin-users/edit/%d", u.id), map[string]any{"username": u.name})
	case loginADeleteB:
		_, err := r.login(ctx, u.id, "phase A")
		return err
	}
	return nil
}

func (r *rehearsal) phaseB(ctx context.Context, admin string, u *wuser) error {
	switch u.kind {
	case replaceBoth, deleteThenAdd:
		return r.upload(ctx, admin, u, true)
	case logoutARename, renameTwice:
		r.w.renamesB++
		if u.kind == renameTwice {
			if _, err := r.login(ctx, u.id, "phase B"); err != nil {
				return err
			}
		}
		return r.call(ctx, admin, "POST", fmt.Sprintf("/admin-users/edit/%d", u.id), map[string]any{"username": u.name + "_b"})
	case loginADeleteB:
		return r.call(ctx, admin, "DELETE", fmt.Sprintf("/admin-users/delete-image/%d", u.id), nil)
	case deleteUserB:
		u.gone = true // made again from its audit record
		return r.call(ctx, admin, "DELETE", fmt.Sprintf("/admin-users/delete/%d", u.id), nil)
	case logoutB:
		u.loggedOut = true // made again from its audit record
		return r.call(ctx, admin, "POST", fmt.Sprintf("/admin-users/logout/%d", u.id), nil)
	}
	return nil
}

// login issues a session of user, as an OAuth login does.
func (r *rehearsal) login(ctx context.Context, user int64, when string) (string, error) {
	t, err := r.sessions.Issue(ctx, user)
	if err != nil {
		return "", err
	}
	r.w.tokens = append(r.w.tokens, token{value: t.Refresh, user: user, when: when})
	return t.Refresh, nil
}

// upload gives u a new picture through the API; after T it is one no restored row may
// name, before it the one the restored row names.
func (r *rehearsal) upload(ctx context.Context, admin string, u *wuser, afterT bool) error {
	body := map[string]any{"image": "data:image/png;base64," + base64.StdEncoding.EncodeToString(picture(u.id, len(u.staleRef)+boolInt(afterT)))}
	if err := r.call(ctx, admin, "POST", fmt.Sprintf("/admin-users/update-image/%d", u.id), body); err != nil {
		return err
	}
	var ref string
	if err := r.db.Pool.QueryRow(ctx, `SELECT profile_image FROM users WHERE id = $1`, u.id).Scan(&ref); err != nil {
		return err
	}
	if afterT {
		u.staleRef = append(u.staleRef, ref)
		return nil
	}
	set, err := imageset.ParseRef(ref)
	if err != nil {
		return err
	}
	if u.high, err = r.objectHash(ctx, set.Key(imageset.High)); err != nil {
		return err
	}
	u.ref = ref
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1000
	}
	return 0
}

// picture is a small PNG of its own colours for each user and upload.
func picture(user int64, n int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 48, 48))
	for y := 0; y < 48; y++ {
		for x := 0; x < 48; x++ {
			img.Set(x, y, color.RGBA{uint8(user * 37), uint8(n*53 + x), uint8(y * 5), 255})
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

// writer inserts a row into rehearsal_writes every few milliseconds, recording when it
// sent each and which were acknowledged: the writes the RPO is measured by.
type writer struct {
	db     *postgres.DB
	mu     sync.Mutex
	sent   map[int64]time.Time
	acked  map[int64]time.Time // when each acknowledged row was
	done   chan struct{}
	cancel context.CancelFunc
	err    error
}

// writeEvery is the writer's pause between two rows.
const writeEvery = 5 * time.Millisecond

func (w *writer) start(ctx context.Context) {
	w.sent, w.acked, w.done = map[int64]time.Time{}, map[int64]time.Time{}, make(chan struct{})
	ctx, w.cancel = context.WithCancel(ctx)
	go func() {
		defer close(w.done)
		for n := int64(1); ctx.Err() == nil; n++ {
			at := time.Now()
			w.mu.Lock()
			w.sent[n] = at
			w.mu.Unlock()
			_, err := w.db.Pool.Exec(ctx, `INSERT INTO rehearsal_writes (n, sent_at) VALUES ($1, $2)`, n, at)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				w.err = err
				return
			}
			w.mu.Lock()
			w.acked[n] = time.Now()
			w.mu.Unlock()
			time.Sleep(writeEvery)
		}
	}()
}

func (w *writer) stop() {
	w.cancel()
	<-w.done
}
