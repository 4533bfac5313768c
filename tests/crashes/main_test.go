package crashes

import (
	"testing"

	"orderflow/internal/testenv"
)

// The child-process tests run the worker binary, built once.
func TestMain(m *testing.M) { testenv.Main(m, testenv.WithBinaries("queue")) }
