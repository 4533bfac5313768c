package groupbuys

import (
	"testing"

	"orderflow/internal/testenv"
)

// The child-process tests run the worker binary (a failpoint can kill it for
// real, and it has its own failpoint settings), built once. These tests
// spend their time waiting on wall-clock schedules (asynq's 30 s lease and
// one-minute recoverer, the 1-2-4-8-16 s retries), not CPU, so at least 4
// run at once.
func TestMain(m *testing.M) {
	testenv.Main(m, testenv.WithBinaries("queue"), testenv.WithMinParallel(4))
}
