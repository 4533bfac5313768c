package faults

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
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
	build := exec.Command("go", "build", "-o", queueBin, "orderflow/queue")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "faults: build the queue worker:", err)
		return 1
	}
	return m.Run()
}
