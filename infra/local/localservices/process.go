package localservices

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// stopTimeout is how long a child gets to exit after its stop signal before its whole
// process group is killed.
const stopTimeout = 15 * time.Second

// process is a child started in its own process group.
type process struct {
	name    string
	cmd     *exec.Cmd
	stopSig syscall.Signal
	out     *tail
	done    chan struct{} // closed when the child has exited and been reaped
}

// startProcess starts cmd in a new process group. stopSig is the child's graceful stop
// signal, also sent by the kernel if this process dies first (Linux). cred, when not
// nil, runs the child as another user. The child's output goes to log (if not nil) and
// to a small in-memory tail used in error messages.
func startProcess(name string, cmd *exec.Cmd, stopSig syscall.Signal, cred *syscall.Credential, log io.Writer) (*process, error) {
	p := &process{name: name, cmd: cmd, stopSig: stopSig, out: newTail(8 << 10), done: make(chan struct{})}
	var w io.Writer = p.out
	if log != nil {
		w = io.MultiWriter(log, p.out)
	}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = sysProcAttr(stopSig, cred)
	// Grandchildren that outlive the child would keep its output pipe open.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s: %w", cmd.Path, err)
	}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitError describes an early exit, with the end of the child's output.
func (p *process) exitError() error {
	return fmt.Errorf("%s exited: %s; its last output:\n%s", p.name, p.cmd.ProcessState, p.out.String())
}

// stop sends the stop signal, waits up to stopTimeout, then kills the whole process
// group; it returns once the child is reaped and no member of its group is left.
func (p *process) stop() error {
	var err error
	if !p.exited() {
		_ = p.cmd.Process.Signal(p.stopSig)
		select {
		case <-p.done:
		case <-time.After(stopTimeout):
			err = fmt.Errorf("%s (pid %d) did not stop within %s and was killed", p.name, p.pid(), stopTimeout)
		}
	}
	// The child is the group's leader (Setpgid), so its pid is the group id. Anything
	// it left behind (a crashed postmaster's backends) goes too.
	if kerr := syscall.Kill(-p.pid(), syscall.SIGKILL); kerr != nil && !errors.Is(kerr, syscall.ESRCH) {
		err = errors.Join(err, fmt.Errorf("kill process group %d: %w", p.pid(), kerr))
	}
	<-p.done
	return err
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTail(max int) *tail { return &tail{max: max} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
