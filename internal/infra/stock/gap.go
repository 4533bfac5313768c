package stock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// MovesKey counts every change the scripts make to a product's counter (a
// take, a give-back, a restore, a resync; same hash tag as the counter). Two
// reads of it that agree mean the counter was not moved in between; a SET
// from outside the scripts (a fault, a test) does not move it.
func MovesKey(productID int64) string { return Key(productID) + ":moves" }

// GapKey remembers the difference between a product's ledger stock and its
// counter that the last sweep pass saw, with the counter's moves then (same
// hash tag as the counter).
func GapKey(productID int64) string { return Key(productID) + ":gap" }

// Sample is a counter read with its moves, in one round trip.
type Sample struct {
	Count int64 // the counter
	Moves int64 // MovesKey at the same instant
}

// Sample reads the counter and its moves; ok is false when the counter is
// missing.
func (c *Counter) Sample(ctx context.Context, productID int64) (s Sample, ok bool, err error) {
	vs, err := c.rdb.MGet(ctx, Key(productID), MovesKey(productID)).Result()
	if err != nil {
		return Sample{}, false, err
	}
	if vs[0] == nil {
		return Sample{}, false, nil
	}
	if s.Count, err = strconv.ParseInt(fmt.Sprint(vs[0]), 10, 64); err != nil {
		return Sample{}, false, fmt.Errorf("stock counter %d: %w", productID, err)
	}
	if vs[1] != nil {
		if s.Moves, err = strconv.ParseInt(fmt.Sprint(vs[1]), 10, 64); err != nil {
			return Sample{}, false, fmt.Errorf("stock counter %d moves: %w", productID, err)
		}
	}
	return s, true, nil
}

// Gap is how far a counter is below the ledger (ledger − counter; negative
// when above it) at a sample, with the counter's moves then.
type Gap struct {
	Size  int64
	Moves int64
}

// GapTo is the sample's gap to the ledger's sellable stock.
func (s Sample) GapTo(ledger int64) Gap { return Gap{Size: ledger - s.Count, Moves: s.Moves} }

// Stuck says whether a gap seen after prev is a fault to repair: the same
// gap, and the counter not moved between the two looks. A gap with takes in
// flight — taken in Redis, not yet committed — lasts milliseconds; under
// steady sales two looks can see the same number of them, but other ones,
// and the counter moved between: no fault, and a reset then would drop the
// takes still in flight from the count (the counter ends above the ledger
// once they commit). A stuck gap is a create killed between its take and
// its commit, a restore Redis refused, a replica that lost a write. (A
// counter that ran short while the ledger has stock is the create's short
// check's to repair, moving or not: order.ShortCheckInterval.)
func (g Gap) Stuck(prev Gap) bool { return g.Size != 0 && g == prev }

// StuckGap records the gap a sweep pass sees (kept in Redis, so the passes
// of every worker compare with each other; it lapses after ttl) and reports
// whether it is Stuck after the one the pass before saw.
func (c *Counter) StuckGap(ctx context.Context, productID int64, s Sample, ledger int64, ttl time.Duration) (bool, error) {
	g := s.GapTo(ledger)
	note := strconv.FormatInt(g.Size, 10) + " " + strconv.FormatInt(g.Moves, 10)
	old, err := c.rdb.SetArgs(ctx, GapKey(productID), note, redis.SetArgs{Get: true, TTL: ttl}).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var prev Gap
	if _, err := fmt.Sscan(old, &prev.Size, &prev.Moves); err != nil {
		return false, nil // a note of another shape: this pass's note starts afresh
	}
	return g.Stuck(prev), nil
}
