package groupbuys

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"orderflow/internal/testenv"
)

// queueBin is the worker binary the child-process tests run (a failpoint can
// kill it for real, and it has its own failpoint settings), built once.
var queueBin string

// minParallel is how many tests run at once unless -parallel says otherwise.
// These tests spend their time waiting on wall-clock schedules (asynq's
// 30 s lease and one-minute recoverer, the 1-2-4-8-16 s retries), not CPU,
// so the default of GOMAXPROCS would serialise the waits for nothing.
const minParallel = 4

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if p := flag.Lookup("test.parallel"); p != nil && !explicit {
		var n int
		fmt.Sscan(p.Value.String(), &n)
		if n < minParallel {
			_ = p.Value.Set(fmt.Sprint(minParallel))
		}
	}

	dir, err := os.MkdirTemp("", "orderflow-groupbuy-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "groupbuy: temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	queueBin = filepath.Join(dir, "queue")
	if err := testenv.BuildBinaries(dir, "queue"); err != nil {
		fmt.Fprintln(os.Stderr, "groupbuy: build the queue worker:", err)
		return 1
	}
	return m.Run()
}
