package testenv

import (
	"fmt"
	"os"
	"os/exec"
)

// BuildBinaries builds the named orderflow commands (e.g. "queue", "api")
// into dir, for tests that run them as child processes (so they can be
// killed mid-step). Call it from TestMain.
func BuildBinaries(dir string, cmds ...string) error {
	args := []string{"build", "-o", dir + string(os.PathSeparator)}
	for _, c := range cmds {
		args = append(args, "orderflow/"+c)
	}
	build := exec.Command("go", args...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build %v: %w", cmds, err)
	}
	return nil
}
