package operations

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"orderflow/internal/testenv"
)

// queueBin and apiBin are the two binaries the child-process tests run,
// built once per test binary.
var queueBin, apiBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "orderflow-operate-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "operate: temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	queueBin, apiBin = filepath.Join(dir, "queue"), filepath.Join(dir, "api")
	if err := testenv.BuildBinaries(dir, "queue", "api"); err != nil {
		fmt.Fprintln(os.Stderr, "operate: build the binaries:", err)
		return 1
	}
	return m.Run()
}
