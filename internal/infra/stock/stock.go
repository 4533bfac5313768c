// Package stock keeps the Redis counters that answer "is there stock?" fast.
// The database is the truth: a missing counter is rebuilt from it, never read
// as "sold out", and a short answer is checked against it (order.takeStock).
//
// Every script here that changes a counter is safe to run twice with the
// same arguments, because the client does run it twice: go-redis re-sends a
// command whose reply missed the read timeout (svc.NewRedis, MaxRetries 1),
// and Redis may already have run it. A take and its give-back carry a token
// with a marker of their own, a restore carries the order's marker, and a
// resync is a compare-and-set.
package stock

import (
	"context"
	"errors"
	"strconv"

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
// one product (counter, take and restore markers) lives in one Cluster slot.
func Key(productID int64) string {
	return "stock:{p" + strconv.FormatInt(productID, 10) + "}"
}

// Counter is the Redis side of stock.
type Counter struct {
	rdb redis.UniversalClient
}

// NewCounter returns a Counter on rdb.
func NewCounter(rdb redis.UniversalClient) *Counter { return &Counter{rdb: rdb} }

// Get reads a counter; ok is false when it is missing.
func (c *Counter) Get(ctx context.Context, productID int64) (n int64, ok bool, err error) {
	n, err = c.rdb.Get(ctx, Key(productID)).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	return n, err == nil, err
}
