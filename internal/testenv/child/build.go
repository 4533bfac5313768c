package child

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// ModuleRoot finds the directory of orderflow's go.mod, so a build works
// from whichever package directory `go test` or `go run` started in.
func ModuleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("go env GOMOD: not inside the orderflow module")
	}
	return filepath.Dir(mod), nil
}

// Build builds the named commands of the module (module-relative package
// paths such as "queue", "api" or "cmd/paysim") into dir, in one go build
// so the packages they share compile once. Each lands at Path(dir, pkg).
func Build(ctx context.Context, dir string, pkgs ...string) error {
	root, err := ModuleRoot()
	if err != nil {
		return fmt.Errorf("build %v: %w", pkgs, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("build %v: %w", pkgs, err)
	}
	args := []string{"build", "-o", dir + string(os.PathSeparator)}
	for _, p := range pkgs {
		args = append(args, "./"+p)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %v: %w\n%s", pkgs, err, out)
	}
	return nil
}

// Path is where Build puts pkg's binary in dir: go build names it after the
// package's last element ("cmd/paysim" → dir/paysim).
func Path(dir, pkg string) string { return filepath.Join(dir, path.Base(pkg)) }
