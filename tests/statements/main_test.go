// Package statements tests the provider statements (对账) end to end: the
// HTTP API and the worker binary against each provider's local fake, whose
// statement of a past day holds a normal payment, a refund made in the
// provider's dashboard, a dropped line, an altered amount and a late
// payment whose notification was lost for an order already closed.
package statements

import (
	"testing"

	"orderflow/internal/testenv"
)

// The worker runs as its own process, built once.
func TestMain(m *testing.M) { testenv.Main(m, testenv.WithBinaries("queue")) }
