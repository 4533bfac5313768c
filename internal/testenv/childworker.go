package testenv

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"orderflow/svc"
)

// ChildWorker is an orderflow process a test runs on its own (a binary built
// by BuildBinaries): it can be killed for real, and its failpoints are its
// own, so tests arming them never collide in the test process.
type ChildWorker struct {
	// Out collects the process's stdout and stderr.
	Out  *LockedBuffer
	cmd  *exec.Cmd
	done chan struct{}
	err  error // cmd.Wait's result, set before done closes
}

// StartChildWorker starts the worker binary on cfg with an
// ORDERFLOW_FAILPOINTS spec ("" for none) and extra ORDERFLOW_* variables.
// It is killed when the test ends; its output is logged if the test failed.
func StartChildWorker(t testing.TB, bin string, cfg svc.Config, failpoints string, env ...string) *ChildWorker {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(Env(cfg), env...)
	if failpoints != "" {
		cmd.Env = append(cmd.Env, "ORDERFLOW_FAILPOINTS="+failpoints)
	}
	return StartChild(t, cmd)
}

// StartChild starts a prepared command the same way: killed when the test
// ends, its output logged if the test failed.
func StartChild(t testing.TB, cmd *exec.Cmd) *ChildWorker {
	t.Helper()
	c := &ChildWorker{cmd: cmd, Out: &LockedBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = c.Out, c.Out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	go func() { c.err = cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		c.Kill()
		if t.Failed() {
			out := c.Out.String()
			if len(out) > 8<<10 { // the driver logs every refused connection during an outage
				out = "…" + out[len(out)-8<<10:]
			}
			t.Logf("process %d (%s) output:\n%s", cmd.Process.Pid, strings.Join(cmd.Args, " "), out)
		}
	})
	return c
}

// Pid is the process's id.
func (c *ChildWorker) Pid() int { return c.cmd.Process.Pid }

// Exited reports whether the process has ended.
func (c *ChildWorker) Exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Kill ends the process with SIGKILL (no draining) and waits for it.
func (c *ChildWorker) Kill() {
	select {
	case <-c.done:
	default:
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// WaitExit waits for the process to end and returns its exit code.
func (c *ChildWorker) WaitExit(t testing.TB, within time.Duration) int {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(within):
		t.Fatalf("worker process %d still running after %v; output:\n%s", c.cmd.Process.Pid, within, c.Out.String())
	}
	var ee *exec.ExitError
	switch {
	case c.err == nil:
		return 0
	case errors.As(c.err, &ee):
		return ee.ExitCode()
	default:
		t.Fatalf("worker process %d: %v", c.cmd.Process.Pid, c.err)
		return -1
	}
}

// Signal sends sig to the process (os.Interrupt is Ctrl-C).
func (c *ChildWorker) Signal(sig os.Signal) error { return c.cmd.Process.Signal(sig) }
