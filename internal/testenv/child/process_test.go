package child_test

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/internal/testenv/child"
)

// sh starts a shell script as a child, its output collected in out.
func sh(t *testing.T, script string, group bool) (*child.Process, *testenv.LockedBuffer) {
	t.Helper()
	out := &testenv.LockedBuffer{}
	p, err := child.Start(child.Options{Path: "/bin/sh", Args: []string{"-c", script}, Env: os.Environ(), Out: out,
		Group: group, DieWithParent: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	return p, out
}

// waitOutput waits until the child has printed want.
func waitOutput(t *testing.T, out *testenv.LockedBuffer, want string) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, "the child to print "+want, func() (bool, error) {
		return strings.Contains(out.String(), want), nil
	})
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string
		stop   func(t *testing.T, p *child.Process, out *testenv.LockedBuffer)
		want   int
	}{
		{"exit 0", "exit 0", func(*testing.T, *child.Process, *testenv.LockedBuffer) {}, 0},
		{"exit 3", "exit 3", func(*testing.T, *child.Process, *testenv.LockedBuffer) {}, 3},
		{"killed", "exec sleep 30", func(_ *testing.T, p *child.Process, _ *testenv.LockedBuffer) { p.Kill() }, -1},
		{"SIGTERM trapped", "trap 'exit 7' TERM; echo trapped; while :; do sleep 0.05; done", func(t *testing.T, p *child.Process, out *testenv.LockedBuffer) {
			waitOutput(t, out, "trapped") // the shell has set its trap
			_ = p.Stop(10 * time.Second)
		}, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, out := sh(t, tc.script, false)
			tc.stop(t, p, out)
			select {
			case <-p.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("still running")
			}
			got, ok := child.ExitCode(p.Err())
			if !ok || got != tc.want {
				t.Errorf("exit code %d (ok %v, err %v), want %d", got, ok, p.Err(), tc.want)
			}
		})
	}
}

func TestStopKillsAfterGrace(t *testing.T) {
	p, out := sh(t, "trap '' TERM; echo trapped; while :; do sleep 0.05; done", false)
	waitOutput(t, out, "trapped")
	err := p.Stop(300 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Stop of a process ignoring SIGTERM: %v, want it killed", err)
	}
	if !p.Exited() {
		t.Error("still running after Stop")
	}
}

func TestSignalGroupReachesChildren(t *testing.T) {
	p, out := sh(t, "sleep 30 & echo started; wait", true)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "started") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.SignalGroup(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the group's leader survived SIGKILL to its group")
	}
	// The orphaned member is reaped by init a moment later.
	for err := syscall.Kill(-p.Pid(), 0); err == nil; err = syscall.Kill(-p.Pid(), 0) {
		if time.Now().After(deadline.Add(5 * time.Second)) {
			t.Fatal("a member of the group is still alive")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWaitHTTPGivesUpWhenTheProcessExits(t *testing.T) {
	p, _ := sh(t, "exit 1", false)
	err := p.WaitHTTP(context.Background(), "http://127.0.0.1:1/", 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("WaitHTTP on an exited process: %v, want it to say the process exited", err)
	}
}
