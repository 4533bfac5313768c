package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// What asynq (v0.26) does with a task a worker holds: the task's ID sits in
// the queue's active list and in its lease set, scored with the Unix second
// the lease ends; the holder's heartbeat pushes that to now + 30 s every
// 5 s. A task whose lease was not pushed for a while is held by a worker
// that is dead or frozen. asynq's own recoverer waits for the lease to end
// and runs once a minute; we put such tasks back at once.
const (
	asynqLease     = 30 * time.Second // asynq's base.LeaseDuration
	asynqHeartbeat = 5 * time.Second  // asynq's heartbeat interval
)

// orphanedAfter is how long a lease must have gone unextended before its
// task is taken back: the worker lease, but never less than two missed
// asynq heartbeats, so a live worker's task is never taken.
func orphanedAfter(lease time.Duration) time.Duration { return max(lease, 2*asynqHeartbeat) }

// requeueOrphansScript puts a queue's orphaned active tasks back at the head
// of its pending list, as asynq's own requeue does at shutdown (rdb's
// requeueCmd); a task its holder finished meanwhile is not in the active
// list and is left alone. Every key shares the queue's hash tag.
//
//	KEYS[1] asynq:{<queue>}:active
//	KEYS[2] asynq:{<queue>}:lease
//	KEYS[3] asynq:{<queue>}:pending
//	ARGV[1] the cutoff, Unix seconds: a lease ending at or before it was not extended in time
//	ARGV[2] the task-key prefix, asynq:{<queue>}:t:
//	ARGV[3] the most tasks to move in one call
//	returns the IDs of the tasks moved
var requeueOrphansScript = redis.NewScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local moved = {}
for _, id in ipairs(ids) do
  if redis.call('LREM', KEYS[1], 0, id) > 0 then
    redis.call('ZREM', KEYS[2], id)
    redis.call('RPUSH', KEYS[3], id)
    redis.call('HSET', ARGV[2] .. id, 'state', 'pending')
    table.insert(moved, id)
  end
end
return moved
`)

// orphanBatch bounds one script call's work (it blocks Redis while it runs).
const orphanBatch = 500

// requeueOrphans puts back every queue's tasks whose lease has not been
// extended for orphanedAfter(lease), and returns their IDs.
func requeueOrphans(ctx context.Context, rdb redis.UniversalClient, queues []string, now time.Time, lease time.Duration) ([]string, error) {
	cutoff := now.Add(asynqLease - orphanedAfter(lease)).Unix()
	var moved []string
	for _, q := range queues {
		prefix := "asynq:{" + q + "}:"
		for {
			ids, err := requeueOrphansScript.Run(ctx, rdb, []string{prefix + "active", prefix + "lease", prefix + "pending"},
				cutoff, prefix+"t:", orphanBatch).StringSlice()
			if err != nil {
				return moved, fmt.Errorf("fleet: requeue orphaned tasks of %s: %w", q, err)
			}
			moved = append(moved, ids...)
			if len(ids) < orphanBatch {
				break
			}
		}
	}
	return moved, nil
}
