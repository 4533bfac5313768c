// Package stock keeps the Redis counters that answer "is there stock?" fast.
// The database is the truth: a missing counter is rebuilt from it, never read
// as "sold out".
package stock

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Outcome of a take.
type Outcome int

// Take outcomes.
const (
	Missing Outcome = -1 // no counter: rebuild from the database and ask again
	Short   Outcome = 0  // not enough stock
	Taken   Outcome = 1  // decremented
)

// Key is a product's counter. The product ID is the hash tag, so every key of
// one product (counter, restore markers) lives in one Cluster slot.
func Key(productID int64) string {
	return "stock:{p" + strconv.FormatInt(productID, 10) + "}"
}

// takeScript decrements a counter only if it holds enough.
//
//	KEYS[1] the product's stock counter
//	ARGV[1] quantity wanted (positive integer)
//	returns -1 if the counter is missing, 0 if it holds less than ARGV[1],
//	        1 after decrementing it by ARGV[1]
var takeScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then return -1 end
if tonumber(v) < tonumber(ARGV[1]) then return 0 end
redis.call('DECRBY', KEYS[1], ARGV[1])
return 1
`)

// putScript gives stock back, but never creates a counter: a missing counter
// is rebuilt from the database, which already counts what is given back.
//
//	KEYS[1] the product's stock counter
//	ARGV[1] quantity to add back
//	returns the new value, or -1 if the counter is missing
var putScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('INCRBY', KEYS[1], ARGV[1])
`)

// Counter is the Redis side of stock.
type Counter struct {
	rdb redis.UniversalClient
}

// NewCounter returns a Counter on rdb.
func NewCounter(rdb redis.UniversalClient) *Counter { return &Counter{rdb: rdb} }

// Take atomically decrements the product's counter by qty if it holds enough.
func (c *Counter) Take(ctx context.Context, productID int64, qty int) (Outcome, error) {
	n, err := takeScript.Run(ctx, c.rdb, []string{Key(productID)}, qty).Int()
	if err != nil {
		return Missing, err
	}
	return Outcome(n), nil
}

// Put adds qty back to an existing counter.
func (c *Counter) Put(ctx context.Context, productID int64, qty int) error {
	return putScript.Run(ctx, c.rdb, []string{Key(productID)}, qty).Err()
}

// Init creates a missing counter from the database's count; an existing one
// is left alone (another process rebuilt it first).
func (c *Counter) Init(ctx context.Context, productID, dbCount int64) error {
	return c.rdb.SetNX(ctx, Key(productID), dbCount, 0).Err()
}

// casScript sets a counter only if it still holds what the caller read, and
// marks the restores the new value already counts, so their own restore
// step (after their commit) does not add them a second time.
//
//	KEYS[1]    the product's stock counter
//	KEYS[2..n] restore markers of flows included in the count (same hash tag)
//	ARGV[1]    the value read before the database ("" = it was missing)
//	ARGV[2]    the database count
//	ARGV[3]    marker lifetime in seconds
//	returns 1 if set, 0 if the counter moved meanwhile
var casScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if (v or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
for i = 2, #KEYS do redis.call('SET', KEYS[i], '1', 'NX', 'EX', ARGV[3]) end
return 1
`)

// Restored names a committed restore flow (an order's close or refund restore).
type Restored struct {
	OrderNo  string
	FlowType int
}

// MarkerTTL outlives any re-run of a restore; if Redis loses a marker it has
// lost the counter too, and the rebuild from the ledger is exact.
const MarkerTTL = 72 * time.Hour

// RecentRestores is how far back a rebuild marks restores as counted: a
// restore's own Redis step runs right after its commit, or on a re-run within
// minutes of it.
const RecentRestores = 30 * time.Minute

// Resync sets the counter to the database's count (reconciliation, or after
// the database refused a take the counter allowed). A plain SET would erase
// a take or restore landing between the database read and the write (an
// erased restore makes the counter say "sold out" while keys are left), and
// would let a restore committed before the read add itself again after it.
// So it reads the counter, then the ledger snapshot (restores, then count),
// and in one script writes only if the counter has not moved meanwhile,
// marking the counted restores done. What can remain is an over-count — a
// take counted in Redis but not yet committed — which the database refuses
// and the next resync heals; never an under-count.
func (c *Counter) Resync(ctx context.Context, productID int64, snapshot func() (int64, []Restored, error)) error {
	key := Key(productID)
	for attempt := range 20 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 2 * time.Millisecond)
		}
		before, err := c.rdb.Get(ctx, key).Result()
		if errors.Is(err, redis.Nil) {
			before = ""
		} else if err != nil {
			return err
		}
		n, restored, err := snapshot()
		if err != nil {
			return err
		}
		keys := []string{key}
		for _, r := range restored {
			keys = append(keys, RestoreMarkerKey(productID, r.OrderNo, r.FlowType))
		}
		ok, err := casScript.Run(ctx, c.rdb, keys, before, n, int(MarkerTTL.Seconds())).Int()
		if err != nil || ok == 1 {
			return err
		}
	}
	return ErrBusy
}

// ErrBusy means the counter kept moving under a resync: it was left as it is
// (takes and restores keep it close) for the next resync.
var ErrBusy = errors.New("stock counter kept moving; left for the next resync")

// Get reads a counter; ok is false when it is missing.
func (c *Counter) Get(ctx context.Context, productID int64) (n int64, ok bool, err error) {
	n, err = c.rdb.Get(ctx, Key(productID)).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	return n, err == nil, err
}

// RestoreMarkerKey marks that one order's stock-flow restore reached Redis.
// It shares the counter's hash tag, so the restore script's two keys live in
// one Cluster slot.
func RestoreMarkerKey(productID int64, orderNo string, flowType int) string {
	return Key(productID) + ":restored:" + orderNo + ":" + strconv.Itoa(flowType)
}

// restoreScript gives an order's stock back to the counter exactly once.
//
//	KEYS[1] the product's stock counter
//	KEYS[2] the order's restore marker (same hash tag)
//	ARGV[1] quantity to give back
//	ARGV[2] marker lifetime in seconds
//	returns 1 if it restored now, 0 if the marker says it already did.
//	A missing counter is not created: its rebuild from the database already
//	counts the restored stock; the marker is still set.
var restoreScript = redis.NewScript(`
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[2]) == false then return 0 end
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('INCRBY', KEYS[1], ARGV[1]) end
return 1
`)

// Restore applies a committed restore stock-flow to Redis once per order and flow type.
func (c *Counter) Restore(ctx context.Context, productID int64, orderNo string, flowType, qty int, markerTTL time.Duration) (bool, error) {
	n, err := restoreScript.Run(ctx, c.rdb,
		[]string{Key(productID), RestoreMarkerKey(productID, orderNo, flowType)},
		qty, int(markerTTL.Seconds())).Int()
	return n == 1, err
}
