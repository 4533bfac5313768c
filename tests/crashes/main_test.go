package crashes

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"orderflow/internal/testenv"
)

// queueBin is the worker binary the child-process tests run, built once.
var queueBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "orderflow-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults: temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	queueBin = filepath.Join(dir, "queue")
	if err := testenv.BuildBinaries(dir, "queue"); err != nil {
		fmt.Fprintln(os.Stderr, "faults: build the queue worker:", err)
		return 1
	}
	return m.Run()
}
