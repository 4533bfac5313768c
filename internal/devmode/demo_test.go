package devmode_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"orderflow/internal/devmode"
)

// TestDemoStory runs the demo in-process on a fresh system, as
// `orderflow demo` does, and checks every chapter of the story happened.
func TestDemoStory(t *testing.T) {
	opt := devmode.DefaultOptions()
	opt.DataDir = t.TempDir()
	opt.APIAddr, opt.WorkerAddr, opt.PaysimAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	opt.Environ = []string{"ORDERFLOW_ORDER_TTL=" + devmode.DemoOrderTTL.String(), "ORDERFLOW_LOG_LEVEL=error"}
	ctx := context.Background()
	sys, err := devmode.Start(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close(ctx)
	var out bytes.Buffer
	if err := devmode.RunDemo(ctx, sys, &out); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`1\. paid and delivered .*pending → paid → claimed → finished.*key \[DEMO-STEAM-\d{4}\]`),
		regexp.MustCompile(`2\. wallet top-up .*wallet 50000 → 60000 cents`),
		regexp.MustCompile(`3\. left unpaid .*pending → closed .*after its expiry`),
		regexp.MustCompile(`4\. paid after closing .*answered 200\): recorded, not delivered; refund RF\w+ succeeded for 5000 cents; card stock now 19`),
		regexp.MustCompile(`5\. group-buy .*3 joined; settled at its deadline, 3 charged 2500 cents each`),
	} {
		if !want.MatchString(got) {
			t.Errorf("demo output lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n"); n != 5 {
		t.Errorf("demo printed %d lines, want 5:\n%s", n, got)
	}
}
