package fleet

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// AsynqLease is asynq's lease length, for tests that lay out its keys.
const AsynqLease = asynqLease

// Beat records worker's beat at now (the registry's beat).
func Beat(ctx context.Context, rdb redis.UniversalClient, worker string, now time.Time, lease time.Duration) ([]string, error) {
	return registry{rdb}.beat(ctx, worker, now, lease)
}

// Forget is the registry's forget.
func Forget(ctx context.Context, rdb redis.UniversalClient, worker string, cutoff time.Time) error {
	return registry{rdb}.forget(ctx, worker, cutoff)
}

// RequeueOrphans is requeueOrphans.
var RequeueOrphans = requeueOrphans
