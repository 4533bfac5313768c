package testenv

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"orderflow/internal/testenv/child"
)

// ReadmeRun is one of the README's run commands running from the
// repository root, on spare ports, in a process group of its own (the
// command starts the API, worker and simulator as its children).
type ReadmeRun struct {
	*ChildWorker
	// Root is the repository root; Env the command's environment.
	Root string
	Env  []string
	// API and Paysim are the listening addresses it was given.
	API, Paysim string
}

// StartReadmeRun starts command (with args) from the repository root with
// env on top of the test's own environment and ports of its own, waits
// until its output matches up, and checks the API answers /readyz. The
// whole group is stopped when the test ends.
func StartReadmeRun(t testing.TB, up *regexp.Regexp, env []string, command string, args ...string) *ReadmeRun {
	t.Helper()
	root, err := child.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	r := &ReadmeRun{
		Root:   root,
		API:    "127.0.0.1:" + strconv.Itoa(SparePort(t)),
		Paysim: "127.0.0.1:" + strconv.Itoa(SparePort(t)),
	}
	r.Env = append(append(os.Environ(),
		"ORDERFLOW_API_ADDR="+r.API,
		"ORDERFLOW_QUEUE_ADDR=127.0.0.1:"+strconv.Itoa(SparePort(t)),
		"ORDERFLOW_PAYSIM_ADDR="+r.Paysim,
	), env...)
	r.ChildWorker = StartChild(t, child.Options{Path: command, Args: args, Dir: root, Env: r.Env, Group: true})
	Eventually(t, 3*time.Minute, command+" prints that orderflow is up", func() (bool, error) {
		if r.Exited() {
			t.Fatalf("%s exited early: %v\n%s", command, r.Err(), r.Out.String())
		}
		return up.MatchString(r.Out.String()), nil
	})
	resp, err := httpClient.Get("http://" + r.API + "/readyz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("readyz after %s: %v %v", command, resp, err)
	}
	resp.Body.Close()
	return r
}

// Walkthrough runs the README's walkthrough (scripts/walkthrough.sh)
// against the running system and fails the test unless it ends with an
// order finished and its key shown.
func (r *ReadmeRun) Walkthrough(t testing.TB, adminToken string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	walk := exec.CommandContext(ctx, "./scripts/walkthrough.sh")
	walk.Dir = r.Root
	walk.Env = append(r.Env, "API=http://"+r.API, "PAYSIM=http://"+r.Paysim, "ORDERFLOW_ADMIN_TOKEN="+adminToken)
	got, err := walk.CombinedOutput()
	if err != nil {
		t.Fatalf("walkthrough failed: %v\n%s", err, got)
	}
	if !strings.Contains(string(got), "finished") || !strings.Contains(string(got), `"cards":["`) {
		t.Fatalf("walkthrough did not end with a delivered key:\n%s", got)
	}
}
