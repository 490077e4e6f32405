package localservices

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	// pgPort is tried first for a persistent cluster, so that tools keep one address.
	pgPort = 54329
	// pgUser is the system user PostgreSQL runs as when this process is root.
	pgUser = "postgres"
	// pgReadyTimeout covers crash recovery after a killed run.
	pgReadyTimeout = 2 * time.Minute
	// pgSystemBinaries is where Debian installs the server, one folder per major version.
	pgSystemBinaries = "/usr/lib/postgresql"
)

// Postgres returns DATABASE_URL when it is set. Otherwise it starts a private cluster
// in Dir/postgres (initialised on first use, reused after) listening on 127.0.0.1 only,
// and returns its superuser URL.
func Postgres(ctx context.Context, opts Options) (*Service, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	if url := opts.Getenv("DATABASE_URL"); url != "" {
		opts.logf("postgres: using DATABASE_URL from the environment")
		return external("postgres", url), nil
	}
	svc, err := startPostgres(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	return svc, nil
}

func startPostgres(ctx context.Context, opts Options) (*Service, error) {
	data, remove, err := opts.dataPath("postgres")
	if err != nil {
		return nil, err
	}
	svc, err := runPostgres(ctx, opts, data, remove)
	if err != nil {
		return nil, errors.Join(err, remove())
	}
	return svc, nil
}

func runPostgres(ctx context.Context, opts Options, data string, remove func() error) (*Service, error) {
	bin, err := findPostgres(ctx, opts, dataVersion(data))
	if err != nil {
		return nil, err
	}
	cred, err := postgresCredential(ctx, opts)
	if err != nil {
		return nil, err
	}
	if err := prepareDataDir(data, cred); err != nil {
		return nil, err
	}
	if dataVersion(data) == "" {
		if err := initdb(ctx, bin, data, cred, opts.Ephemeral); err != nil {
			return nil, err
		}
	} else if err := checkPostmasterPID(data); err != nil {
		return nil, err
	}
	log, err := opts.logFile("postgres.log")
	if err != nil {
		return nil, err
	}
	closeLog := func() error {
		if log == nil {
			return nil
		}
		return log.Close()
	}

	preferred := pgPort
	switch {
	case opts.PostgresPort != 0:
		preferred = opts.PostgresPort
	case opts.Ephemeral:
		// Concurrent test processes would race for one fixed port.
		preferred = 0
	}
	var url string
	p, err := startOnFreePort(ctx, preferred, "could not bind",
		func(port int) (*process, error) {
			if opts.PostgresPort != 0 && port != opts.PostgresPort {
				return nil, fmt.Errorf("port %d is taken", opts.PostgresPort)
			}
			args := postgresArgs(data, port, opts.Ephemeral)
			for _, setting := range opts.PostgresSettings {
				args = append(args, "-c", setting)
			}
			cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
			cmd.Dir = data
			// SIGINT is PostgreSQL's fast shutdown: sessions end, a checkpoint is written.
			return startProcess("postgres", cmd, syscall.SIGINT, cred, fileOrNil(log))
		},
		func(ctx context.Context, p *process, port int) error {
			url = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
			return waitReady(ctx, p, pgReadyTimeout, func(ctx context.Context) error { return ping(ctx, url) })
		})
	if err != nil {
		return nil, errors.Join(err, closeLog())
	}
	where := "data in " + data
	if log != nil {
		where += ", log in " + log.Name()
	}
	opts.logf("postgres: PostgreSQL %s (pid %d) at %s, %s", dataVersion(data), p.pid(), url, where)
	return &Service{Name: "postgres", Endpoint: url, Managed: true, proc: p, dataDir: data, stop: func() error {
		return errors.Join(p.stop(), closeLog(), remove())
	}}, nil
}

// PostgresBinaries returns the folder of the PostgreSQL server's programs (initdb,
// postgres, pg_basebackup) that Postgres runs, of the major version want ("" for any),
// installing them as Postgres does when they are missing. A postgres on PATH that is a
// link (Debian's packages install the programs in one folder and may link a few
// elsewhere) is followed to that folder.
func PostgresBinaries(ctx context.Context, opts Options, want string) (string, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return "", err
	}
	dir, err := findPostgres(ctx, opts, want)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(filepath.Join(dir, "postgres"))
	if err != nil {
		return "", err
	}
	return filepath.Dir(real), nil
}

// ServerOwned creates dir (mode 0700) and, when this process is root, hands it to the
// system user PostgreSQL runs as, so that the server can write there (the rehearsal's
// WAL archive).
func ServerOwned(ctx context.Context, dir string) error {
	opts, err := Options{Ephemeral: true}.withDefaults()
	if err != nil {
		return err
	}
	cred, err := postgresCredential(ctx, opts)
	if err != nil {
		return err
	}
	return prepareDataDir(dir, cred)
}

// fileOrNil keeps a nil *os.File from becoming a non-nil io.Writer.
func fileOrNil(f *os.File) io.Writer {
	if f == nil {
		return nil
	}
	return f
}

func postgresArgs(data string, port int, ephemeral bool) []string {
	args := []string{
		"-D", data,
		"-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=" + socketDir(data, port),
	}
	if ephemeral {
		// Throwaway data: durability is not worth its time; one server may serve
		// every test package at once.
		args = append(args,
			"-c", "fsync=off",
			"-c", "synchronous_commit=off",
			"-c", "full_page_writes=off",
			"-c", "max_connections=200",
		)
	}
	return args
}

// socketDir keeps the Unix socket inside the data folder, unless that path is too long
// for a socket address; then the server listens on TCP only.
func socketDir(data string, port int) string {
	const maxSocketPath = 100 // sun_path is 108 bytes on Linux, 104 on the BSDs
	if len(filepath.Join(data, fmt.Sprintf(".s.PGSQL.%d", port))) > maxSocketPath {
		return ""
	}
	return data
}

func ping(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return conn.Ping(ctx)
}

// dataVersion returns the major version a data folder was initialised with, or "" for
// a new folder.
func dataVersion(data string) string {
	b, err := os.ReadFile(filepath.Join(data, "PG_VERSION"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// findPostgres returns the folder holding initdb and postgres: the one of the data's
// major version if there is one, else the one on PATH, else Debian's newest. As root it
// installs Debian's postgresql package when there is none.
func findPostgres(ctx context.Context, opts Options, want string) (string, error) {
	if dir := lookPostgres(want); dir != "" {
		return dir, nil
	}
	if os.Geteuid() != 0 {
		return "", errors.New("PostgreSQL server binaries (initdb, postgres) not found on PATH or in " +
			pgSystemBinaries + "/*/bin: install PostgreSQL, or set DATABASE_URL")
	}
	if err := installPostgres(ctx, opts, want); err != nil {
		return "", err
	}
	if dir := lookPostgres(want); dir != "" {
		return dir, nil
	}
	return "", errors.New("PostgreSQL server binaries not found even after installing the postgresql package")
}

func lookPostgres(want string) string {
	var dirs []string
	if want != "" {
		dirs = append(dirs, filepath.Join(pgSystemBinaries, want, "bin"))
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	system, _ := filepath.Glob(filepath.Join(pgSystemBinaries, "*", "bin"))
	slices.SortFunc(system, func(a, b string) int { return -compareVersions(versionOf(a), versionOf(b)) })
	dirs = append(dirs, system...)
	for _, dir := range dirs {
		if isExecutable(filepath.Join(dir, "postgres")) && isExecutable(filepath.Join(dir, "initdb")) {
			return dir
		}
	}
	return ""
}

func versionOf(binDir string) string { return filepath.Base(filepath.Dir(binDir)) }

// compareVersions orders "9.6" < "15" < "16".
func compareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(pa), len(pb)); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return x - y
		}
	}
	return 0
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// installPostgres installs Debian's postgresql package, once among concurrent runs.
func installPostgres(ctx context.Context, opts Options, want string) error {
	unlock, err := lockFile(ctx, filepath.Join(os.TempDir(), "mediacatalog-apt.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	if lookPostgres(want) != "" {
		return nil // installed by a concurrent run
	}
	opts.logf("postgres: server binaries not found; installing Debian's postgresql package")
	for _, args := range [][]string{
		{"-q", "update"},
		{"-q", "install", "-y", "--no-install-recommends", "postgresql"},
	} {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get %s: %w\n%s", strings.Join(args, " "), err, lastLines(out, 20))
		}
	}
	return nil
}

func lastLines(b []byte, n int) []byte {
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return bytes.Join(lines, []byte("\n"))
}

// postgresCredential returns nil when this process is not root. As root it returns
// the postgres system user (created if missing): initdb and postgres refuse to run as
// root.
func postgresCredential(ctx context.Context, opts Options) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(pgUser)
	var unknown user.UnknownUserError
	if errors.As(err, &unknown) {
		opts.logf("postgres: creating the %s system user (PostgreSQL refuses to run as root)", pgUser)
		out, addErr := exec.CommandContext(ctx, "useradd", "--system", "--user-group", "--no-create-home",
			"--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", pgUser).CombinedOutput()
		// A concurrent run may have created it first; only a missing user is fatal.
		if u, err = user.Lookup(pgUser); err != nil && addErr != nil {
			return nil, fmt.Errorf("useradd %s: %w: %s", pgUser, addErr, bytes.TrimSpace(out))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("look up user %s: %w", pgUser, err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: uid %q: %w", pgUser, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: gid %q: %w", pgUser, u.Gid, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// prepareDataDir creates the data folder with the permissions PostgreSQL demands and,
// when the server runs as another user, hands the folder to that user.
func prepareDataDir(data string, cred *syscall.Credential) error {
	if err := os.MkdirAll(data, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", data, err)
	}
	if err := os.Chmod(data, 0o700); err != nil {
		return fmt.Errorf("chmod %s: %w", data, err)
	}
	if cred == nil {
		return nil
	}
	if err := checkReachable(filepath.Dir(data), cred); err != nil {
		return err
	}
	fi, err := os.Stat(data)
	if err != nil {
		return fmt.Errorf("stat %s: %w", data, err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid == cred.Uid && st.Gid == cred.Gid {
		return nil
	}
	err = filepath.WalkDir(data, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(cred.Uid), int(cred.Gid))
	})
	if err != nil {
		return fmt.Errorf("hand %s to user %s: %w", data, pgUser, err)
	}
	return nil
}

// checkReachable reports the first folder from dir up to / that the user cannot enter,
// with the usual owner, group, other precedence.
func checkReachable(dir string, cred *syscall.Credential) error {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("stat %s: %w", d, err)
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			perm := fi.Mode().Perm()
			var bit fs.FileMode = 0o001
			switch {
			case st.Uid == cred.Uid:
				bit = 0o100
			case st.Gid == cred.Gid:
				bit = 0o010
			}
			if perm&bit == 0 {
				return fmt.Errorf("PostgreSQL runs as user %s here (it refuses root), and that user cannot enter %s: "+
					"choose a data folder it can reach, or allow it (chmod o+x %s)", pgUser, d, d)
			}
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

func initdb(ctx context.Context, bin, data string, cred *syscall.Credential, ephemeral bool) error {
	// Trust authentication is safe because the server listens on 127.0.0.1 only (and
	// on a socket inside the data folder, which only the server's user can enter).
	args := []string{"-D", data, "-U", "postgres", "-E", "UTF8", "--locale=C", "-A", "trust"}
	if ephemeral {
		args = append(args, "--no-sync")
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), args...)
	cmd.Dir = data
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, lastLines(out, 20))
	}
	return nil
}

// checkPostmasterPID deals with the lock file of an earlier server. A live server on
// this folder is an error; a lock whose process is gone is left to PostgreSQL, which
// checks its shared memory before taking over; a lock whose process id now belongs to
// another program (common after a killed run in a container) is removed, because
// PostgreSQL would otherwise refuse to start.
func checkPostmasterPID(data string) error {
	lock := filepath.Join(data, "postmaster.pid")
	b, err := os.ReadFile(lock)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", lock, err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return removeLock(lock)
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return nil
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		if _, procErr := os.Stat("/proc/self/cmdline"); procErr == nil && errors.Is(err, fs.ErrNotExist) {
			return nil // it exited meanwhile
		}
		return fmt.Errorf("a process (pid %d) may still hold %s: stop it, or delete the file if it is stale", pid, lock)
	}
	args := strings.Split(string(cmdline), "\x00")
	if len(args) > 0 && filepath.Base(args[0]) == "postgres" && slices.Contains(args, data) {
		return fmt.Errorf("a PostgreSQL server (pid %d) already runs on %s: stop it first", pid, data)
	}
	return removeLock(lock)
}

func removeLock(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove stale %s: %w", path, err)
	}
	return nil
}
