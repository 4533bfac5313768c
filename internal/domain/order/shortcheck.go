package order

import (
	"sync"
	"time"
)

// ShortCheckInterval is how often, per product and per process, a short
// Redis stock counter is checked against the ledger before a create answers
// out_of_stock. A product really sold out costs one indexed count per
// interval, not one per request. Between checks the last one's answer
// stands: sold out (409 at once), or stock in the ledger (the create takes
// from the counter anyway and the database decides). A counter found below
// the ledger by the same amount at two checks at least an interval apart is
// repaired from the ledger: a gap that lasted that long is not a take in
// flight or a restore a moment from landing, but a fault (a process dead
// between take and commit, a restore Redis refused). Unlike the sweep's
// check (stock.Gap.Stuck) it does not ask for a counter unmoved between the
// two checks: a short counter moves with every create taking anyway, and
// never climbs back by itself, so waiting for it to stand still would leave
// it short for as long as sales go on.
const ShortCheckInterval = time.Second

// shortCheck is the last ledger check of one product's short counter.
type shortCheck struct {
	at     time.Time
	ledger int64 // sellable stock in the ledger
	gap    int64 // ledger minus counter
}

// shortChecks remembers each product's last check.
type shortChecks struct {
	mu   sync.Mutex
	last map[int64]shortCheck // one entry per limited product: bounded by the catalog
}

func newShortChecks() *shortChecks { return &shortChecks{last: map[int64]shortCheck{}} }

// recent returns the product's last check if it is less than an interval
// old at now (a clock that stepped back does not count as recent).
func (c *shortChecks) recent(productID int64, now time.Time) (shortCheck, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	last, ok := c.last[productID]
	return last, ok && !now.Before(last.at) && now.Sub(last.at) < ShortCheckInterval
}

// record stores a check and returns the one before it.
func (c *shortChecks) record(productID int64, now time.Time, ledger, gap int64) (shortCheck, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev, ok := c.last[productID]
	c.last[productID] = shortCheck{at: now, ledger: ledger, gap: gap}
	return prev, ok
}
