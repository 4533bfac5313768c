package child

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Options say what to run and how.
type Options struct {
	// Name labels the process in errors; the binary's name when empty.
	Name string
	Path string
	Args []string
	// Dir is the working directory; the caller's when empty.
	Dir string
	// Env is the child's whole environment.
	Env []string
	// Out receives stdout and stderr; nil discards them.
	Out io.Writer
	// Group puts the child in a process group of its own, so a Ctrl-C at
	// the terminal reaches only the parent, which stops the child itself.
	Group bool
	// DieWithParent has the kernel SIGKILL the child when the parent dies
	// (Linux; ignored elsewhere), so no worker or private server outlives a
	// crashed run.
	DieWithParent bool
}

// Process is one started child. Its exit is reaped once, in the
// background; Done closes after that and Err holds the result.
type Process struct {
	Name  string
	cmd   *exec.Cmd
	group bool
	done  chan struct{}
	err   error // cmd.Wait's result, set before done closes
}

// Start starts the child described by o.
func Start(o Options) (*Process, error) {
	name := o.Name
	if name == "" {
		name = filepath.Base(o.Path)
	}
	cmd := exec.Command(o.Path, o.Args...)
	cmd.Dir, cmd.Env = o.Dir, o.Env
	if o.Out != nil {
		cmd.Stdout, cmd.Stderr = o.Out, o.Out
	}
	cmd.SysProcAttr = sysProcAttr(o.Group, o.DieWithParent)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{Name: name, cmd: cmd, group: o.Group, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done closes when the process has ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is how the process ended (nil for exit 0); valid once Done is closed.
func (p *Process) Err() error {
	<-p.done
	return p.err
}

// errExitedZero stands for a process that exited with status 0 where an
// error must say how it ended.
var errExitedZero = errors.New("exit status 0")

// endErr is how an exited process ended, never nil.
func (p *Process) endErr() error {
	if p.err == nil {
		return errExitedZero
	}
	return p.err
}

// Signal sends sig to the process (os.Interrupt is Ctrl-C).
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// SignalGroup sends sig to the process's whole group when it was started
// with Group (a `go run` and the program it runs, a script and its
// children), else to the process alone.
func (p *Process) SignalGroup(sig syscall.Signal) error {
	if !p.group {
		return p.cmd.Process.Signal(sig)
	}
	return syscall.Kill(-p.Pid(), sig)
}

// Kill ends the process with SIGKILL (no draining: the kill -9 the crash
// tests and the chaos faults mean) and waits until it is gone.
func (p *Process) Kill() {
	if !p.Exited() {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Stop sends SIGTERM and waits for the process to drain and exit; after
// grace it is killed. It returns how the process ended, or an error saying
// it had to be killed.
func (p *Process) Stop(grace time.Duration) error {
	if p.Exited() {
		return fmt.Errorf("%s had already exited: %w", p.Name, p.endErr())
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		if p.err != nil {
			return fmt.Errorf("%s: exit after SIGTERM: %w", p.Name, p.err)
		}
		return nil
	case <-time.After(grace):
		p.Kill()
		return fmt.Errorf("%s did not exit within %s of SIGTERM; killed", p.Name, grace)
	}
}

// ExitCode reads a process's exit code from its Err: 0 for nil, the code
// of an *exec.ExitError, and ok false for anything else (say it could not
// be waited for).
func ExitCode(err error) (code int, ok bool) {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, true
	case errors.As(err, &ee):
		return ee.ExitCode(), true
	default:
		return -1, false
	}
}

// WaitHTTP polls url until it answers 200, giving up when the process
// exits, ctx ends or within has passed.
func (p *Process) WaitHTTP(ctx context.Context, url string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited during start-up: %w", p.Name, p.endErr())
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s: %s not answering 200 after %s", p.Name, url, within)
}
