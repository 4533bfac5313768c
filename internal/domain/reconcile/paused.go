package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"orderflow/internal/infra/tasks"
	"orderflow/model"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// NotifyQueuePaused is the kind of the admin notification the sweep raises
// for a paused queue.
const NotifyQueuePaused = "queue_paused"

// pausedKey is where asynq marks a paused queue: PauseQueue sets it to the
// Unix second of the pause, UnpauseQueue deletes it (the Inspector's
// QueueInfo.Paused is this key's existence). The stamp is what tells one
// pause from the next, which the Inspector does not say; idlepoll's
// scripts read the same key.
func pausedKey(queue string) string { return "asynq:{" + queue + "}:paused" }

// alertPausedQueues tells the admin, once per pause, about each of the
// fleet's queues that is paused, and logs every pass that finds one. A
// paused queue's tasks are still in asynq, so the sweep counts them as
// live and re-queues nothing: without this, paid orders behind a paused
// critical queue would wait without a word.
func (s *Sweeper) alertPausedQueues(ctx context.Context) error {
	queues := make([]string, 0, len(tasks.QueueWeights))
	for q := range tasks.QueueWeights {
		queues = append(queues, q)
	}
	slices.Sort(queues)
	for _, q := range queues {
		stamp, err := s.Redis.Get(ctx, pausedKey(q)).Int64()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return fmt.Errorf("paused queues: read queue %s: %w", q, err)
		}
		since := time.Unix(stamp, 0).UTC()
		s.Log.Warn("queue paused: its tasks wait, and the sweep counts them as live", zap.String("queue", q), zap.Time("paused_since", since))
		now := s.Clock.Now()
		err = s.Store.InsertNotification(ctx, &model.Notification{
			// One per pause: a pass that finds the same pause finds its id taken.
			NotifyID: fmt.Sprintf("queue-paused:%s:%d", q, stamp), Kind: NotifyQueuePaused, Recipient: "admin", CreatedAt: now,
			Subject: "Queue " + q + " paused",
			Message: fmt.Sprintf("asynq queue %s has been paused since %s: its tasks wait, and the sweep counts them as live, so nothing moves them on; resume it at /monitoring/queues/%s unless the pause is meant",
				q, since.Format(time.RFC3339), q),
		})
		if err != nil {
			return fmt.Errorf("paused queues: alert queue %s: %w", q, err)
		}
	}
	return nil
}
