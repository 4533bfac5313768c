package reconcile_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"
	"orderflow/svc"

	"github.com/hibiken/asynq"
)

// Undelivered webhooks through N sweep passes, one sweep interval apart,
// every one past the stale cut (its next attempt due long ago):
//   - backlog: its task waits, pending, behind a long queue;
//   - posting: a worker holds its lease and its task is active;
//   - lost: no task anywhere (Redis lost it), no lease;
//   - dead: its task was left active by a worker that died, the lease ran out.
//
// A pass re-queues only the last two, once each: a waiting task or a held
// lease is a delivery under way, and a new generation beside it would only
// pile up tasks (and, with the lease taken from it, post the event twice).
func TestSweepDoesNotPileWebhookTasks(t *testing.T) {
	t.Parallel()
	const passes = 5
	s := testenv.Start(t, testenv.Options{NoWorker: true, Configure: func(c *svc.Config) {
		c.SweepPageSize = 50
		c.WebhookURL, c.WebhookSecret = "http://127.0.0.1:9/hooks", "test-webhook-secret" // never posted: no worker
	}})
	ctx := context.Background()
	fake := clock.NewFake(time.Now())
	// A sweeper of the test's own on the fake clock; the stack's stays as it is.
	sw := *s.UC.Sweeper
	hooks := *sw.Webhooks
	hooks.Clock, sw.Clock, sw.Budget = fake, fake, 0
	sw.Webhooks = &hooks

	due := fake.Now().Add(-time.Hour)
	seedWebhook := func(eventID string, leaseUntil *time.Time) {
		t.Helper()
		if err := s.SC.DB.Exec(`INSERT INTO webhooks (event_id, type, body, next_attempt_at, lease_until, created_at) VALUES (?, 'order.paid', '{}', ?, ?, ?)`,
			eventID, due, leaseUntil, due).Error; err != nil {
			t.Fatal(err)
		}
	}
	// enqueue puts generation 0's task in asynq; active, it is what a worker
	// running it leaves in asynq's task hash (the state LiveMany reads).
	enqueue := func(eventID string, active bool) {
		t.Helper()
		id := tasks.ID(tasks.TypeWebhookDeliver, eventID, 0)
		task, err := s.SC.Tasks.NewTask(tasks.TypeWebhookDeliver, id, tasks.Encode(tasks.WebhookPayload{EventID: eventID}), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SC.Asynq.EnqueueContext(ctx, task); err != nil {
			t.Fatal(err)
		}
		if active {
			if err := s.SC.Redis.HSet(ctx, "asynq:{"+tasks.QueueDefault+"}:t:"+id, "state", "active").Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	held, expired := fake.Now().Add(24*time.Hour), due.Add(40*time.Second)
	seedWebhook("evt_backlog", nil)
	enqueue("evt_backlog", false)
	seedWebhook("evt_posting", &held)
	enqueue("evt_posting", true)
	seedWebhook("evt_lost", nil)
	seedWebhook("evt_dead", &expired)
	enqueue("evt_dead", true)

	for range passes {
		fake.Advance(time.Minute) // a sweep interval
		if _, err := sw.Pass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		eventID    string
		tasks, gen int // delivery tasks in the outbox or asynq, and the webhook's task generation
	}{{"evt_backlog", 1, 0}, {"evt_posting", 1, 0}, {"evt_lost", 1, 1}, {"evt_dead", 2, 1}} {
		gen := s.Count(t, `SELECT task_gen FROM webhooks WHERE event_id = ?`, c.eventID)
		n := 0
		for g := range passes + 1 {
			id := tasks.ID(tasks.TypeWebhookDeliver, c.eventID, g)
			_, err := s.SC.Inspector.GetTaskInfo(tasks.QueueDefault, id)
			switch {
			case err == nil:
				n++
			case errors.Is(err, asynq.ErrTaskNotFound):
				n += int(s.Count(t, `SELECT COUNT(*) FROM outbox WHERE task_id = ?`, id))
			default:
				t.Fatal(err)
			}
		}
		if n != c.tasks || int(gen) != c.gen {
			t.Errorf("%s after %d passes: %d delivery tasks, task generation %d; want %d and %d", c.eventID, passes, n, gen, c.tasks, c.gen)
		}
	}
}
