package webhooks

import (
	"testing"

	"orderflow/internal/testenv"
)

// The crash test runs the worker binary, built once.
func TestMain(m *testing.M) { testenv.Main(m, testenv.WithBinaries("queue")) }
