// Package payments tests the payment providers end to end: orderflow's HTTP
// API and the worker binary against a local fake of each provider that
// speaks its real wire format and signs with test keys.
package payments

import (
	"testing"

	"orderflow/internal/testenv"
)

// The worker runs as its own process, built once.
func TestMain(m *testing.M) { testenv.Main(m, testenv.WithBinaries("queue")) }
