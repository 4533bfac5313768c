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
		s.Moves, _ = strconv.ParseInt(fmt.Sprint(vs[1]), 10, 64)
	}
	return s, true, nil
}

// StuckGap records the gap between the ledger's stock and the counter that a
// sweep pass sees (ledger − s.Count), and reports whether the pass before it
// saw the same gap with the counter not moved since. That is a fault (a
// create killed between its take and its commit, a replica that lost a
// write), which the sweep repairs. A gap with takes in flight — taken in
// Redis, not yet committed — lasts milliseconds; under steady sales two
// passes can see the same number of them, but other ones, and the counter
// moved between: no fault, and a reset then would drop the takes still in
// flight from the count. The note lapses after ttl.
func (c *Counter) StuckGap(ctx context.Context, productID int64, s Sample, ledger int64, ttl time.Duration) (bool, error) {
	gap := ledger - s.Count
	note := strconv.FormatInt(gap, 10) + " " + strconv.FormatInt(s.Moves, 10)
	old, err := c.rdb.SetArgs(ctx, GapKey(productID), note, redis.SetArgs{Get: true, TTL: ttl}).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return gap != 0 && old == note, nil
}
