package tasks

import (
	"context"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"
)

// QueueRegistryKey is asynq's set of queue names (base.AllQueues in
// asynq's internal/base, not exported). asynqmon, the Inspector and the
// asynq_* metrics list only the queues it names. asynq adds a queue to it
// once per process (a client's first enqueue on the queue, a server's
// start), so a partial Redis loss that takes the set hides queues the
// fleet goes on using until every process restarts; RestoreQueueRegistry
// puts them back. A plain key, not one of the hash-tagged per-queue keys,
// so one SADD is fine on Redis Cluster too.
const QueueRegistryKey = "asynq:queues"

// Queues is every queue the table's types run on, sorted.
func (t Table) Queues() []string {
	var qs []string
	for _, s := range t {
		if !slices.Contains(qs, s.Queue) {
			qs = append(qs, s.Queue)
		}
	}
	slices.Sort(qs)
	return qs
}

// RestoreQueueRegistry adds every queue of the table to asynq's queue set
// in one idempotent SADD.
func (t Table) RestoreQueueRegistry(ctx context.Context, rdb redis.UniversalClient) error {
	qs := t.Queues()
	members := make([]any, len(qs))
	for i, q := range qs {
		members[i] = q
	}
	if err := rdb.SAdd(ctx, QueueRegistryKey, members...).Err(); err != nil {
		return fmt.Errorf("restore asynq queue registry: %w", err)
	}
	return nil
}
