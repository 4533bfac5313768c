package operations

import (
	"testing"

	"orderflow/internal/testenv"
)

// The child-process tests run the worker and API binaries, built once.
func TestMain(m *testing.M) { testenv.Main(m, testenv.WithBinaries("queue", "api")) }
