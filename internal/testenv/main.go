package testenv

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"orderflow/internal/testenv/child"
)

// mainConfig is what a package's TestMain asks of Main.
type mainConfig struct {
	binaries    []string
	minParallel int
}

// MainOption is one thing a test package needs before its tests run.
type MainOption func(*mainConfig)

// WithBinaries builds the named commands of the module ("api", "queue",
// "cmd/orderflow", "cmd/paysim") once for the whole test binary, for tests
// that run them as child processes (so they can be killed for real and
// keep failpoints of their own). Binary returns their paths.
func WithBinaries(pkgs ...string) MainOption {
	return func(c *mainConfig) { c.binaries = append(c.binaries, pkgs...) }
}

// WithMinParallel raises -test.parallel to n unless the command line set
// it: for packages whose tests spend their time waiting on wall-clock
// schedules (leases, retry back-off), not CPU, so the default of
// GOMAXPROCS would serialise the waits for nothing.
func WithMinParallel(n int) MainOption {
	return func(c *mainConfig) { c.minParallel = n }
}

// binDir is where Main built the binaries; empty when it built none.
var binDir string

// Main is every test package's TestMain: it prepares what the options ask
// for, runs the tests, cleans up and exits with their status — failed, too,
// when an exchange with the API broke its OpenAPI document and no test
// reported it.
//
//	func TestMain(m *testing.M) { testenv.Main(m, testenv.WithBinaries("queue")) }
func Main(m *testing.M, opts ...MainOption) {
	os.Exit(runMain(m, opts))
}

func runMain(m *testing.M, opts []MainOption) int {
	var c mainConfig
	for _, o := range opts {
		o(&c)
	}
	if c.minParallel > 0 {
		raiseParallel(c.minParallel)
	}
	if len(c.binaries) > 0 {
		dir, err := os.MkdirTemp("", "orderflow-test-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "testenv: temp dir for binaries:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		if err := child.Build(context.Background(), dir, c.binaries...); err != nil {
			fmt.Fprintln(os.Stderr, "testenv:", err)
			return 1
		}
		binDir = dir
	}
	code := m.Run()
	if err := leftViolations(); err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	return code
}

func raiseParallel(n int) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	p := flag.Lookup("test.parallel")
	if p == nil || explicit {
		return
	}
	var cur int
	if _, err := fmt.Sscan(p.Value.String(), &cur); err != nil || cur < n {
		_ = p.Value.Set(fmt.Sprint(n))
	}
}

// BinDir is the directory holding the binaries Main built.
func BinDir() string {
	if binDir == "" {
		panic("testenv: no binaries built; call testenv.Main(m, testenv.WithBinaries(...)) from TestMain")
	}
	return binDir
}

// Binary is the path of a command Main built, named as in WithBinaries.
func Binary(pkg string) string { return child.Path(BinDir(), pkg) }
