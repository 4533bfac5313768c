package order

import (
	"testing"
	"time"
)

// A short counter's ledger check runs at most once per product per
// ShortCheckInterval: a sold-out product under load costs one count per
// interval, each product has its own allowance, and record hands back the
// check before it (the gap the repair compares).
func TestShortChecksRunOncePerProductPerInterval(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	c := newShortChecks()
	if _, ok := c.recent(1, t0); ok {
		t.Fatal("a product never checked has a recent check")
	}
	if _, had := c.record(1, t0, 10, 10); had {
		t.Fatal("the first record returned an earlier check")
	}
	steps := []struct {
		name    string
		product int64
		at      time.Time
		recent  bool
	}{
		{"same product, same instant", 1, t0, true},
		{"same product, just inside the interval", 1, t0.Add(ShortCheckInterval - time.Millisecond), true},
		{"another product has its own allowance", 2, t0.Add(time.Millisecond), false},
		{"first product, one interval on", 1, t0.Add(ShortCheckInterval), false},
		{"a clock that stepped back does not lock a product out", 1, t0.Add(-time.Hour), false},
	}
	for _, st := range steps {
		if _, got := c.recent(st.product, st.at); got != st.recent {
			t.Errorf("%s: recent(%d, %v) = %v, want %v", st.name, st.product, st.at.Sub(t0), got, st.recent)
		}
	}
	prev, had := c.record(1, t0.Add(ShortCheckInterval), 9, 10)
	if !had || prev.ledger != 10 || prev.gap != 10 || !prev.at.Equal(t0) {
		t.Errorf("record returned %+v (had %v), want the check at t0 with ledger 10, gap 10", prev, had)
	}
	if last, ok := c.recent(1, t0.Add(ShortCheckInterval+time.Millisecond)); !ok || last.ledger != 9 {
		t.Errorf("recent after the second record = %+v (%v), want ledger 9", last, ok)
	}
}
