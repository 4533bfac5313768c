package stock

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// GapKey remembers the difference between a product's ledger stock and its
// counter that the last sweep pass saw (same hash tag as the counter).
func GapKey(productID int64) string { return Key(productID) + ":gap" }

// NoteGap records the gap a sweep pass sees and returns the one the pass
// before it saw (had is false when none was recorded, or it lapsed after
// ttl). A gap that is the same at two passes is no take in flight — those
// last milliseconds — but a fault, and the sweep repairs the counter.
func (c *Counter) NoteGap(ctx context.Context, productID, gap int64, ttl time.Duration) (prev int64, had bool, err error) {
	old, err := c.rdb.SetArgs(ctx, GapKey(productID), gap, redis.SetArgs{Get: true, TTL: ttl}).Result()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	prev, err = strconv.ParseInt(old, 10, 64)
	return prev, err == nil, nil
}
