package testenv

import (
	"errors"
	"os/exec"
	"testing"
	"time"

	"orderflow/svc"
)

// ChildWorker is a queue worker running as its own process (a binary built
// by BuildBinaries): a failpoint can kill it for real, and its failpoints
// are its own, so tests arming them never collide in the test process.
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
	c := &ChildWorker{cmd: cmd, Out: &LockedBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = c.Out, c.Out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start worker process: %v", err)
	}
	go func() { c.err = cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		c.Kill()
		if t.Failed() {
			out := c.Out.String()
			if len(out) > 8<<10 { // the driver logs every refused connection during an outage
				out = "…" + out[len(out)-8<<10:]
			}
			t.Logf("worker process %d (failpoints %q) output:\n%s", cmd.Process.Pid, failpoints, out)
		}
	})
	return c
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
