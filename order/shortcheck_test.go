package order

import (
	"testing"
	"time"
)

// A short counter's ledger check runs at most once per product per
// ShortCheckInterval: a sold-out product under load costs one count per
// interval, and each product has its own allowance.
func TestShortChecksRunOncePerProductPerInterval(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	c := newShortChecks()
	steps := []struct {
		name    string
		product int64
		at      time.Time
		want    bool
	}{
		{"first check of a product", 1, t0, true},
		{"same product, same instant", 1, t0, false},
		{"same product, just inside the interval", 1, t0.Add(ShortCheckInterval - time.Millisecond), false},
		{"another product has its own allowance", 2, t0.Add(time.Millisecond), true},
		{"first product, one interval on", 1, t0.Add(ShortCheckInterval), true},
		{"right after that check", 1, t0.Add(ShortCheckInterval + time.Millisecond), false},
		{"a clock that stepped back does not lock a product out", 1, t0.Add(-time.Hour), true},
	}
	for _, st := range steps {
		if got := c.allow(st.product, st.at); got != st.want {
			t.Errorf("%s: allow(%d, %v) = %v, want %v", st.name, st.product, st.at.Sub(t0), got, st.want)
		}
	}
}
