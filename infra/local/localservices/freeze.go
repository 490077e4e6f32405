package localservices

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Freeze stops (SIGSTOP) the service's process and its children, as a hung host
// would: connections stay open and nothing answers them. PostgreSQL's backends are
// sessions of their own (setsid), so signalling the postmaster's process group would
// not reach them; they are found as its children in /proc. thaw (SIGCONT) resumes
// them all; call it once. Only a service started here can be frozen.
func (s *Service) Freeze() (thaw func(), err error) {
	if s.proc == nil || s.proc.exited() {
		return nil, fmt.Errorf("freeze %s: not a running service started here", s.Name)
	}
	pids := append([]int{s.proc.pid()}, children(s.proc.pid())...)
	var stopped []int
	resume := func() {
		for _, pid := range stopped {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			if errors.Is(err, syscall.ESRCH) && pid != pids[0] {
				continue // a backend that ended meanwhile
			}
			resume()
			return nil, fmt.Errorf("freeze %s: stop pid %d: %w", s.Name, pid, err)
		}
		stopped = append(stopped, pid)
	}
	return resume, nil
}

// children are the processes whose parent is pid (none where there is no /proc).
func children(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, f := range stats {
		st, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
		fields := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			if child, err := strconv.Atoi(filepath.Base(filepath.Dir(f))); err == nil {
				out = append(out, child)
			}
		}
	}
	return out
}
