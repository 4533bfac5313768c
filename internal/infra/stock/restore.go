package stock

import (
	"context"
	"strconv"
	"time"

	"orderflow/model"

	"github.com/redis/go-redis/v9"
)

// RestoreMarkerKey marks that one order's stock-flow restore is counted in
// the counter. It shares the counter's hash tag, so the restore script's two
// keys live in one Cluster slot.
func RestoreMarkerKey(productID int64, orderNo string, flowType model.FlowKind) string {
	return Key(productID) + ":restored:" + orderNo + ":" + strconv.Itoa(int(flowType))
}

// RestoreResult says what a restore did.
type RestoreResult int

// Restore results.
const (
	// RestoreMissing: no counter, nothing done, no marker set. The caller
	// rebuilds the counter (Resync) after its commit, which counts its flow.
	RestoreMissing RestoreResult = -1
	// RestoreDone: the marker says the counter already counts this flow.
	RestoreDone RestoreResult = 0
	// RestoreApplied: added to the counter now.
	RestoreApplied RestoreResult = 1
)

// restoreScript gives an order's stock back to the counter exactly once.
// The marker means "the counter counts this flow", so it is set only with
// the INCRBY (or by a rebuild whose count includes the flow): a restore onto
// a missing counter sets nothing, or a rebuild that read the ledger before
// the flow committed would write a count without it and the marker would
// keep the flow out forever.
//
//	KEYS[1] the product's stock counter
//	KEYS[2] the order's restore marker (same hash tag)
//	KEYS[3] the counter's moves (same hash tag)
//	ARGV[1] quantity to give back
//	ARGV[2] marker lifetime in seconds
//	returns 1 if it restored now, 0 if the marker says it already did,
//	-1 if the counter is missing
var restoreScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[2]) == false then return 0 end
redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('INCR', KEYS[3])
return 1
`)

// Restore applies a committed restore stock-flow to Redis once per order and flow type.
func (c *Counter) Restore(ctx context.Context, productID int64, orderNo string, flowType model.FlowKind, qty int, markerTTL time.Duration) (RestoreResult, error) {
	n, err := restoreScript.Run(ctx, c.rdb,
		[]string{Key(productID), RestoreMarkerKey(productID, orderNo, flowType), MovesKey(productID)},
		qty, int(markerTTL.Seconds())).Int()
	return RestoreResult(n), err
}
