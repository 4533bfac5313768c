package reconcile

import (
	"context"
	"time"

	"orderflow/internal/infra/tasks"
	"orderflow/model"
)

// webhooks: an undelivered shop webhook's delivery task (a failing one is
// live while asynq retries it; archived after its budget, it gets a new
// generation). With webhooks off there is nothing to deliver to.
func (s *Sweeper) webhooks(ctx context.Context, w walkAt, limit int) ([]object, error) {
	if s.Webhooks == nil || !s.Webhooks.On() {
		return nil, nil
	}
	rows, err := s.Store.UndeliveredWebhooksPage(ctx, w.start, w.cur.ID, limit)
	if err != nil {
		return nil, err
	}
	dead, err := s.deadWebhookTasks(ctx, rows, w.start)
	if err != nil {
		return nil, err
	}
	return objectsOf(rows, nil, func(h *model.Webhook) object {
		o := object{cur: model.Cursor{ID: h.ID}, taskID: tasks.ID(tasks.TypeWebhookDeliver, h.EventID, h.TaskGen),
			requeue: func(ctx context.Context) (bool, error) { return s.Webhooks.Requeue(ctx, h) }}
		switch {
		case leaseHeld(h, w.start):
			// A post is in flight: its outcome decides what comes next,
			// and a new generation would only wait for the lease.
			o.taskID, o.requeue = "", nil
		case dead[o.taskID]:
			o.taskID = ""
		}
		return o
	})
}

// deadWebhookTasks is which of rows' current tasks a worker that died left
// active: asynq recovers such a task only after its own lease and a
// one-minute check, so the sweep re-queues it at once (the new generation
// waits for no lease: it ran out). A task is taken for dead when asynq
// calls it active long past the webhook's due time (two sweep intervals —
// Budget is half of one — and a post) while no lease is held; only active
// ones: a task waiting in a long queue is as old, and another generation
// beside it, every pass, would only pile up tasks.
func (s *Sweeper) deadWebhookTasks(ctx context.Context, rows []model.Webhook, now time.Time) (map[string]bool, error) {
	stale := now.Add(-(4*s.Budget + webhookPostTimeout))
	var ids []string
	for i := range rows {
		if h := &rows[i]; h.NextAttemptAt.Before(stale) && !leaseHeld(h, now) {
			ids = append(ids, tasks.ID(tasks.TypeWebhookDeliver, h.EventID, h.TaskGen))
		}
	}
	return s.Tasks.ActiveMany(ctx, s.Redis, tasks.TypeWebhookDeliver, ids)
}

// leaseHeld: a delivery holds h's lease at now.
func leaseHeld(h *model.Webhook, now time.Time) bool {
	return h.LeaseUntil != nil && h.LeaseUntil.After(now)
}

// webhookPostTimeout is the longest one webhook post runs (its client's timeout).
const webhookPostTimeout = 10 * time.Second
