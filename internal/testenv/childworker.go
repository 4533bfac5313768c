package testenv

import (
	"bytes"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"orderflow/internal/testenv/child"
	"orderflow/svc"
)

// ChildWorker is an orderflow process a test runs on its own (a binary Main
// built): it can be killed for real, and its failpoints are its own, so
// tests arming them never collide in the test process.
type ChildWorker struct {
	*child.Process
	// Out collects the process's stdout and stderr.
	Out *LockedBuffer
}

// StartChildWorker starts the worker binary on cfg with an
// ORDERFLOW_FAILPOINTS spec ("" for none) and extra ORDERFLOW_* variables.
// It is killed when the test ends; its output is logged if the test failed.
func StartChildWorker(t testing.TB, bin string, cfg svc.Config, failpoints string, env ...string) *ChildWorker {
	t.Helper()
	env = append(Env(cfg), env...)
	if failpoints != "" {
		env = append(env, "ORDERFLOW_FAILPOINTS="+failpoints)
	}
	return StartChild(t, child.Options{Name: "worker", Path: bin, Env: env})
}

// StartChild starts o the same way: its output collected in Out, killed
// (SIGKILL) when the test ends, the output logged if the test failed.
func StartChild(t testing.TB, o child.Options) *ChildWorker {
	t.Helper()
	c := &ChildWorker{Out: &LockedBuffer{}}
	o.Out = c.Out
	p, err := child.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	c.Process = p
	t.Cleanup(func() {
		if o.Group && !c.Exited() {
			// A group (a script and what it started) gets the chance to
			// stop its members before they are all killed.
			_ = c.SignalGroup(syscall.SIGTERM)
			select {
			case <-c.Done():
			case <-time.After(15 * time.Second):
			}
		}
		if o.Group {
			_ = c.SignalGroup(syscall.SIGKILL)
		}
		c.Kill()
		if t.Failed() {
			out := c.Out.String()
			if len(out) > 8<<10 { // the driver logs every refused connection during an outage
				out = "…" + out[len(out)-8<<10:]
			}
			t.Logf("%s (pid %d) output:\n%s", c.Name, c.Pid(), out)
		}
	})
	return c
}

// SignalT sends sig to the process and fails the test if it cannot.
func (c *ChildWorker) SignalT(t testing.TB, sig os.Signal) {
	t.Helper()
	if err := c.Signal(sig); err != nil {
		t.Fatalf("signal %s: %v", c.Name, err)
	}
}

// WaitExit waits for the process to end and returns its exit code.
func (c *ChildWorker) WaitExit(t testing.TB, within time.Duration) int {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(within):
		t.Fatalf("%s (pid %d) still running after %v; output:\n%s", c.Name, c.Pid(), within, c.Out.String())
	}
	code, ok := child.ExitCode(c.Err())
	if !ok {
		t.Fatalf("%s (pid %d): %v", c.Name, c.Pid(), c.Err())
	}
	return code
}

// LockedBuffer is a bytes.Buffer safe for a child process's output copier
// and the test reading it at once.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
