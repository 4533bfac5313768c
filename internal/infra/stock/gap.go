package stock

import (
	"context"
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
// when above it) at a sample, with the counter's moves then, and whether the
// counter held still (no script moved it) from the sample until after the
// ledger was read.
type Gap struct {
	Size  int64
	Moves int64
	Still bool
}

// Fault says whether a gap seen after prev is a fault to repair.
//
// Work in flight only ever puts a counter below the ledger: a take comes
// before its commit, a restore's commit before its give-back. So a counter
// above the ledger that held still while the ledger was read (read after
// the counter) is a fault at once, however busy the product — a replica
// that lost takes in a failover, a reset that counted takes which then
// committed.
//
// A counter below the ledger may be takes in flight, which last
// milliseconds; under steady sales two looks can see the same number of
// them, but other ones, with the counter moved between. It is a fault only
// when the look before saw the same gap and the counter has not moved
// since: a create killed between its take and its commit, a restore Redis
// refused. (A counter that ran short while the ledger has stock is the
// create's short check's to repair, moving or not: order.ShortCheckInterval.)
func (g Gap) Fault(prev Gap) bool {
	if g.Size < 0 && g.Still {
		return true
	}
	return g.Size != 0 && g.Size == prev.Size && g.Moves == prev.Moves
}

// noteGapScript records a pass's gap (kept in Redis, so the passes of every
// worker compare with each other) and reads the counter's moves now.
//
//	KEYS[1] the product's gap note
//	KEYS[2] the counter's moves (same hash tag)
//	ARGV[1] the note: "<size> <moves at the sample>"
//	ARGV[2] the note's lifetime in seconds
//	returns {the note before ("" if none), the moves now}
var noteGapScript = redis.NewScript(`
local old = redis.call('GET', KEYS[1]) or ''
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return {old, redis.call('GET', KEYS[2]) or '0'}
`)

// GapFault records the gap between sample s and the ledger's count, read
// after s (the note lapses after ttl), and reports whether it is a Fault
// after the one the pass before saw.
func (c *Counter) GapFault(ctx context.Context, productID int64, s Sample, ledger int64, ttl time.Duration) (bool, error) {
	g := Gap{Size: ledger - s.Count, Moves: s.Moves}
	note := strconv.FormatInt(g.Size, 10) + " " + strconv.FormatInt(g.Moves, 10)
	vs, err := noteGapScript.Run(ctx, c.rdb, []string{GapKey(productID), MovesKey(productID)},
		note, int(ttl.Seconds())).StringSlice()
	if err != nil {
		return false, err
	}
	moves, err := strconv.ParseInt(vs[1], 10, 64)
	if err != nil {
		return false, fmt.Errorf("stock counter %d moves: %w", productID, err)
	}
	g.Still = moves == s.Moves
	var prev Gap
	if _, err := fmt.Sscan(vs[0], &prev.Size, &prev.Moves); err != nil {
		prev = Gap{} // none, or a note of another shape: this pass's note starts afresh
	}
	return g.Fault(prev), nil
}
