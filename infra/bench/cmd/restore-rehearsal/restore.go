package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/infra/ops/reconcile"
	"github.com/mediacatalog/service/infra/ops/restore"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/postgres"
	"github.com/mediacatalog/service/shared/postgres/migrate"
)

// disaster stops the API and the primary: the database is lost.
func (r *rehearsal) disaster() error {
	r.srv.close()
	r.srv = nil
	r.db.Close()
	r.db = nil
	err := r.primary.Stop()
	r.primary = nil
	return err
}

// endRestore stops a restore's API and cluster, for the next restore of the backup.
func (r *rehearsal) endRestore() {
	if r.srv != nil {
		r.srv.close()
		r.srv = nil
	}
	if r.db != nil {
		r.db.Close()
		r.db = nil
	}
	if r.restored != nil {
		_ = r.restored.Stop()
		r.restored = nil
	}
}

// restore runs the procedure of docs/operations.md on the local stack, as variant v
// has it: the point-in-time recovery of the base backup and the archive to T into a
// new cluster, the migrations, restore-revocations, the API on the new cluster,
// reconcile-images.
func (r *rehearsal) restore(ctx context.Context, v variant, n int) error {
	dir := filepath.Join(r.run, fmt.Sprintf("restored-%d", n+1))
	err := r.timed("point-in-time recovery to T into a new cluster", func() error { return r.recoverTo(ctx, dir) })
	if err != nil {
		return err
	}
	err = r.timed("make migrate on the restored database", func() error { return migrate.Up(ctx, r.restored.Endpoint, nil) })
	if err != nil {
		return err
	}
	if r.db, err = postgres.Open(ctx, r.restored.Endpoint); err != nil {
		return err
	}
	err = r.timed("make restore-revocations (the audit records after T)", func() error {
		var records []restore.Record
		for _, path := range r.auditLogs {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			recs, err := restore.Read(f)
			f.Close()
			if err != nil {
				return err
			}
			records = append(records, recs...)
		}
		res, err := restore.Apply(ctx, r.db, records, r.w.point, restore.Options{KeepSessions: v.skipCutoff})
		fmt.Fprintf(r.o.out, "  %d audit records, %d after T: %d revocations made again, %d grants listed\n",
			len(records), countAfter(records, r.w.point), len(res.Applied), len(res.ByHand))
		return err
	})
	if err != nil {
		return err
	}
	err = r.timed("the API served from the restored database", func() error {
		r.srv, err = r.serve(ctx, r.restored.Endpoint, fmt.Sprintf("restored-%d", n+1))
		return err
	})
	if err != nil {
		return err
	}
	cfg, err := config.Load(r.env(r.restored.Endpoint, ""))
	if err != nil {
		return err
	}
	if r.sessions, err = auth.NewSessions(r.db, cfg); err != nil {
		return err
	}
	if v.skipReconcile {
		fmt.Fprintln(r.o.out, "make reconcile-images DELETE=1: left out (-skip-reconcile)")
		return nil
	}
	return r.timed("make reconcile-images DELETE=1", func() error {
		rep, err := reconcile.Run(ctx, r.db, r.s3, reconcile.Options{Bucket: bucket, Delete: true,
			// Nothing serves while it runs: every change is settled.
			Settle: time.Nanosecond})
		fmt.Fprintln(r.o.out, "  "+rep.Summary())
		return err
	})
}

func countAfter(records []restore.Record, t time.Time) int {
	n := 0
	for _, rec := range records {
		if rec.Time.After(t) {
			n++
		}
	}
	return n
}

// recoverTo restores the base backup into dir and replays the archived WAL up to T,
// then promotes: PostgreSQL's point-in-time recovery (recovery.signal with a
// restore_command and a recovery_target_time), as RDS does on its own backups.
func (r *rehearsal) recoverTo(ctx context.Context, dir string) error {
	data := filepath.Join(dir, "postgres")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, "cp", "-a", r.base, data).CombinedOutput(); err != nil {
		return fmt.Errorf("copy the base backup: %w: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(data, "recovery.signal"), nil, 0o600); err != nil {
		return err
	}
	var err error
	r.restored, err = localservices.Postgres(ctx, localservices.Options{Dir: dir, Getenv: noDatabaseURL,
		PostgresSettings: append([]string{"restore_command=cp " + r.archive + "/%f %p",
			"recovery_target_time=" + r.w.point.UTC().Format("2006-01-02 15:04:05.999999-07:00"),
			"recovery_target_action=promote", "archive_mode=off", "synchronous_commit=on",
			// A recovery first makes the copied files durable: one syncfs of the file
			// system rather than an fsync of every file (seconds even for a small one).
			"recovery_init_sync_method=syncfs"}, serverSizing...)})
	if err != nil {
		return err
	}
	db, err := postgres.Open(ctx, r.restored.Endpoint)
	if err != nil {
		return err
	}
	defer db.Close()
	for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var recovering bool
		if err := db.Pool.QueryRow(ctx, `SELECT pg_is_in_recovery()`).Scan(&recovering); err != nil {
			return err
		}
		if !recovering {
			return nil
		}
	}
	return errors.New("the restored cluster did not leave recovery within 10 minutes")
}
