package devmode_test

import (
	"testing"

	"orderflow/internal/testenv"
)

// The restart tests kill cmd/orderflow for real, so it is built once.
func TestMain(m *testing.M) { testenv.Main(m, testenv.WithBinaries("cmd/orderflow")) }
