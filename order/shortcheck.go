package order

import (
	"sync"
	"time"
)

// ShortCheckInterval is how often, per product and per process, a short
// Redis stock counter is checked against the ledger before a create answers
// out_of_stock. A product really sold out costs one indexed count per
// interval, not one per request; a counter a fault left below the ledger is
// repaired by the first create that finds it short, and within an interval
// of any earlier check.
const ShortCheckInterval = time.Second

// shortChecks remembers when each product's short counter was last checked.
type shortChecks struct {
	mu   sync.Mutex
	last map[int64]time.Time // one entry per limited product: bounded by the catalog
}

func newShortChecks() *shortChecks { return &shortChecks{last: map[int64]time.Time{}} }

// allow reports whether a check of productID may run at now, and if so
// counts it as run.
func (c *shortChecks) allow(productID int64, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if at, ok := c.last[productID]; ok && !now.Before(at) && now.Sub(at) < ShortCheckInterval {
		return false
	}
	c.last[productID] = now
	return true
}
