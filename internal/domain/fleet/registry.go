// Package fleet notices a worker process that died (kill -9, a lost
// machine) or froze, and takes its work over within ORDERFLOW_WORKER_LEASE:
// every worker beats a lease in Redis; a survivor that sees one lapse
// releases the claims that worker made (they name it in the ledger) and
// puts the asynq tasks it held back in their queues — without waiting for
// the claim timeout or asynq's lease recovery (30 s, then a minute's
// recoverer), and without touching a live worker's claims.
//
// Redis may vanish: the registry is rebuilt by the next beat of every live
// worker, and a claim holder the registry no longer lists is taken over only
// after a whole lease without a beat (watch.go).
package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// RegistryKey is the sorted set of live workers: member the worker's ID,
// score the Unix milliseconds of its last beat.
const RegistryKey = "orderflow:workers"

// takeoverKey is held (SET NX, one lease long) by the survivor that takes a
// lost worker over, so the others leave it; correctness does not rest on
// it — every release is a conditional UPDATE, every re-queue a checked move.
func takeoverKey(worker string) string { return "orderflow:takeover:" + worker }

// NewWorkerID names this process: host, pid and a random part, so a
// restarted process on the same pid is another worker.
func NewWorkerID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "worker"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return host + ":" + strconv.Itoa(os.Getpid()) + ":" + hex.EncodeToString(b)
}

// beatScript records one worker's beat and answers who has lapsed, in one
// round trip.
//
//	KEYS[1] RegistryKey
//	ARGV[1] the beating worker's ID
//	ARGV[2] now, Unix milliseconds (the beating worker's clock)
//	ARGV[3] the lapse cutoff: a last beat before it has lapsed
//	returns the IDs of the workers that have lapsed
var beatScript = redis.NewScript(`
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3])
`)

// forgetScript drops a lapsed worker from the registry once it is taken
// over — unless it beat again meanwhile (it was frozen, not dead).
//
//	KEYS[1] RegistryKey
//	ARGV[1] the worker's ID
//	ARGV[2] the lapse cutoff the takeover used
//	returns 1 if the worker was dropped, 0 if it beat since (or was gone)
var forgetScript = redis.NewScript(`
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s and tonumber(s) < tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
return 0
`)

// registry is the Redis side of the leases.
type registry struct{ rdb redis.UniversalClient }

// beat records self's beat at now and returns the workers whose last beat is
// older than lease.
func (r registry) beat(ctx context.Context, self string, now time.Time, lease time.Duration) ([]string, error) {
	ids, err := beatScript.Run(ctx, r.rdb, []string{RegistryKey}, self, now.UnixMilli(), now.Add(-lease).UnixMilli()).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("fleet: beat: %w", err)
	}
	return ids, nil
}

// members returns every worker the registry lists.
func (r registry) members(ctx context.Context) (map[string]bool, error) {
	ids, err := r.rdb.ZRange(ctx, RegistryKey, 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("fleet: list workers: %w", err)
	}
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// claim reserves worker's takeover for this survivor for one lease.
func (r registry) claim(ctx context.Context, worker, self string, lease time.Duration) (bool, error) {
	ok, err := r.rdb.SetNX(ctx, takeoverKey(worker), self, lease).Result()
	if err != nil {
		return false, fmt.Errorf("fleet: claim takeover of %s: %w", worker, err)
	}
	return ok, nil
}

// forget drops worker if its last beat is still before cutoff.
func (r registry) forget(ctx context.Context, worker string, cutoff time.Time) error {
	if err := forgetScript.Run(ctx, r.rdb, []string{RegistryKey}, worker, cutoff.UnixMilli()).Err(); err != nil {
		return fmt.Errorf("fleet: forget %s: %w", worker, err)
	}
	return nil
}

// leave drops self from the registry: a worker that shuts down cleanly
// hands its tasks back itself.
func (r registry) leave(ctx context.Context, self string) error {
	return r.rdb.ZRem(ctx, RegistryKey, self).Err()
}
