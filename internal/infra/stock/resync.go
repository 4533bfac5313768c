package stock

import (
	"context"
	"errors"
	"time"

	"orderflow/model"

	"github.com/redis/go-redis/v9"
)

// casScript sets a counter only if it still holds what the caller read, and
// marks the restores the new value already counts, so their own restore
// step (after their commit) does not add them a second time. Run twice, the
// second run finds the counter moved (or equal) and changes nothing wrong.
//
//	KEYS[1]    the product's stock counter
//	KEYS[2]    the counter's moves (same hash tag)
//	KEYS[3..n] restore markers of flows included in the count (same hash tag)
//	ARGV[1]    the value read before the database ("" = it was missing)
//	ARGV[2]    the database count
//	ARGV[3]    marker lifetime in seconds
//	returns 1 if set, 0 if the counter moved meanwhile
var casScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if (v or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('INCR', KEYS[2])
for i = 3, #KEYS do redis.call('SET', KEYS[i], '1', 'NX', 'EX', ARGV[3]) end
return 1
`)

// Restored names a committed restore flow (an order's close or refund restore).
type Restored struct {
	OrderNo  string
	FlowType model.FlowKind
}

// MarkerTTL outlives any re-run of a restore; if Redis loses a marker it has
// lost the counter too, and the rebuild from the ledger is exact.
const MarkerTTL = 72 * time.Hour

// RecentRestores is how far back a rebuild marks restores as counted: a
// restore's own Redis step runs right after its commit, or on a re-run within
// minutes of it.
const RecentRestores = 30 * time.Minute

// Resync sets the counter to the database's count (reconciliation, a
// create the database refused although the counter allowed it, a short
// counter the ledger contradicted for a whole check interval). A plain SET
// would erase a take or restore landing between the database read and the
// write (an erased restore makes the counter say "sold out" while keys are
// left), and would let a restore committed before the read add itself again
// after it. So it reads the counter, then the ledger snapshot (restores,
// then count), and in one script writes only if the counter has not moved
// meanwhile, marking the counted restores done. What can remain is an
// over-count — a take counted in Redis but not yet committed — which the
// database refuses and the next resync heals; never an under-count. A
// missing counter is built with Build instead.
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
		keys := []string{key, MovesKey(productID)}
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

// Build creates a missing counter from the database's count, through the
// same compare-and-set: it writes only if the counter is still missing, and
// reports false when another process built it first (a second writer would
// erase the takes made since, and over-count them). Unlike a SETNX after a
// count it marks the restores its count includes, and a restore that found
// no counter sets no marker but builds (or, beaten to it, restores again):
// so a build from a count read before a close committed cannot drop that
// close's stock.
func (c *Counter) Build(ctx context.Context, productID int64, snapshot func() (int64, []Restored, error)) (bool, error) {
	key := Key(productID)
	if n, err := c.rdb.Exists(ctx, key).Result(); err != nil || n == 1 {
		return false, err
	}
	n, restored, err := snapshot()
	if err != nil {
		return false, err
	}
	keys := []string{key, MovesKey(productID)}
	for _, r := range restored {
		keys = append(keys, RestoreMarkerKey(productID, r.OrderNo, r.FlowType))
	}
	ok, err := casScript.Run(ctx, c.rdb, keys, "", n, int(MarkerTTL.Seconds())).Int()
	return ok == 1, err
}

// ErrBusy means the counter kept moving under a resync: it was left as it is
// (takes and restores keep it close) for the next resync.
var ErrBusy = errors.New("stock counter kept moving; left for the next resync")
