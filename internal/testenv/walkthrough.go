package testenv

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Walkthrough runs the README's walkthrough (scripts/walkthrough.sh in the
// repository at root) against a running system and fails the test unless it
// ends with an order finished and its key shown.
func Walkthrough(t testing.TB, root string, env []string, apiAddr, paysimAddr, adminToken string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	walk := exec.CommandContext(ctx, "./scripts/walkthrough.sh")
	walk.Dir = root
	walk.Env = append(env, "API=http://"+apiAddr, "PAYSIM=http://"+paysimAddr, "ORDERFLOW_ADMIN_TOKEN="+adminToken)
	got, err := walk.CombinedOutput()
	if err != nil {
		t.Fatalf("walkthrough failed: %v\n%s", err, got)
	}
	if !strings.Contains(string(got), "finished") || !strings.Contains(string(got), `"cards":["`) {
		t.Fatalf("walkthrough did not end with a delivered key:\n%s", got)
	}
}
