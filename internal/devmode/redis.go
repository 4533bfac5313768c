package devmode

import (
	"fmt"

	"github.com/alicebob/miniredis/v2"
)

// StartRedis starts an in-process Redis-compatible server for asynq and the
// stock counters. Its TTL clock runs on the wall clock, so keys expire as on
// a real Redis (asynq's unique locks and leases depend on it). Everything it
// holds dies with the process: the ledger's reconciliation rebuilds it.
func StartRedis(addr string) (*miniredis.Miniredis, error) {
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true)
	if err := m.StartAddr(addr); err != nil {
		return nil, fmt.Errorf("embedded redis on %s: %w", addr, err)
	}
	return m, nil
}
