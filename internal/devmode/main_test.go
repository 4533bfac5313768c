package devmode_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"orderflow/internal/testenv"
)

// orderflowBin is cmd/orderflow, built once for the tests that kill it.
var orderflowBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "orderflow-dev-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := testenv.BuildBinaries(dir, "cmd/orderflow"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	orderflowBin = filepath.Join(dir, "orderflow")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
