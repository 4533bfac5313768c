package chaos

import (
	"context"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"orderflow/internal/infra/failpoint"
	"orderflow/internal/testenv/child"
)

// proc is one supervised child process. While it is wanted, the supervisor
// starts it again whenever it is not running — after a kill -9 the fault
// schedule asked for, or after it exited on its own (say it could not reach
// the database at start-up). Unplanned exits are counted for the report.
type proc struct {
	name string
	path string
	args []string
	env  []string
	log  string // file the output is appended to

	mu        sync.Mutex
	cmd       *child.Process // nil while not running
	done      chan struct{}
	want      bool
	stopped   bool // SIGSTOP'd
	starts    int
	unplanned int // exits nobody asked for
	lastExit  string
	planned   bool // the running instance is being killed on purpose
}

func newProc(name, path string, args, env []string, log string) *proc {
	return &proc{name: name, path: path, args: args, env: env, log: log}
}

// spawn starts the process if it is not running. p.mu must be held.
func (p *proc) spawnLocked() error {
	if p.cmd != nil {
		return nil
	}
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "\n==== chaos: start #%d of %s at %s ====\n", p.starts+1, p.name, time.Now().UTC().Format(time.RFC3339Nano))
	pr, err := child.Start(child.Options{Name: p.name, Path: p.path, Args: p.args, Env: p.env, Out: f,
		Group: true, DieWithParent: true})
	if err != nil {
		f.Close()
		return err
	}
	done := make(chan struct{})
	p.cmd, p.done, p.planned, p.stopped = pr, done, false, false
	p.starts++
	go func() {
		<-pr.Done()
		err := pr.Err()
		f.Close()
		p.mu.Lock()
		if !p.planned && !injectedDeath(err) {
			p.unplanned++
			p.lastExit = fmt.Sprint(err)
		}
		if p.cmd == pr {
			p.cmd = nil
		}
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

// Start marks the process wanted and starts it now.
func (p *proc) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.want = true
	return p.spawnLocked()
}

// Pid is the running instance's process ID (0 when it is not running).
func (p *proc) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Pid()
}

// Kill9 stops wanting the process, sends SIGKILL and waits until it is gone.
func (p *proc) Kill9() { p.signalAndWait(syscall.SIGKILL) }

// Stop stops wanting the process, sends SIGTERM and waits (then SIGKILL
// after grace).
func (p *proc) Stop(grace time.Duration) {
	done := p.release(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		p.Kill9()
	}
}

func (p *proc) signalAndWait(sig syscall.Signal) { <-p.release(sig) }

// release stops wanting the process and sends it sig (thawing it first if
// it is frozen, so it can act on the signal); the channel closes once it is
// gone (at once when it was not running).
func (p *proc) release(sig syscall.Signal) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.want = false
	if p.cmd == nil {
		return closed
	}
	p.planned = true
	if p.stopped && sig != syscall.SIGKILL {
		_ = p.cmd.Signal(syscall.SIGCONT)
	}
	_ = p.cmd.Signal(sig)
	return p.done
}

// closed is a channel that is already closed.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Freeze sends SIGSTOP: the process keeps its sockets but answers nothing.
func (p *proc) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		_ = p.cmd.Signal(syscall.SIGSTOP)
		p.stopped = true
	}
}

// Thaw sends SIGCONT.
func (p *proc) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && p.stopped {
		_ = p.cmd.Signal(syscall.SIGCONT)
		p.stopped = false
	}
}

// injectedDeath: the process exited at one of the product's failpoints
// (failpoint.ExitCode), which a fault asked for — not an unplanned exit.
func injectedDeath(err error) bool {
	code, ok := child.ExitCode(err)
	return ok && err != nil && code == failpoint.ExitCode
}

// RestartWith kills the process and starts it once more with extra
// variables (say an armed failpoint); later restarts use its usual ones.
func (p *proc) RestartWith(extra ...string) error {
	p.Kill9()
	p.mu.Lock()
	defer p.mu.Unlock()
	usual := p.env
	p.env = append(append([]string{}, usual...), extra...)
	err := p.spawnLocked()
	p.env, p.want = usual, true
	return err
}

// Want marks the process wanted again; the supervisor starts it.
func (p *proc) Want() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.want = true
}

// Running reports whether the process is up.
func (p *proc) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil
}

// Counts returns how often it was started and how often it exited unasked.
func (p *proc) Counts() (starts, unplanned int, lastExit string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts, p.unplanned, p.lastExit
}

// supervise restarts wanted processes that are not running, until ctx ends.
func supervise(ctx context.Context, every time.Duration, procs ...*proc) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, p := range procs {
			p.mu.Lock()
			if p.want && p.cmd == nil {
				_ = p.spawnLocked()
			}
			p.mu.Unlock()
		}
	}
}
