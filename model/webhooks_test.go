package model_test

import (
	"fmt"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/model"
)

// A re-queue (an operator's retry, the sweep) of a webhook whose post is in
// flight gives it a new task generation but leaves the post's lease alone:
// the new task cannot lease it, so two posts of one event never overlap,
// until the lease runs out (the post's worker died) or the post ends.
func TestRequeueWebhookKeepsAHeldLease(t *testing.T) {
	b := setup(t)
	b.store.SetWebhooks(model.Webhooks{EventFor: func(string, string, string) string { return "" },
		Task: func(eventID string, gen int, now time.Time) *model.OutboxRow {
			return model.TaskRow(fmt.Sprintf("webhook:deliver:%s:%d", eventID, gen), "webhook:deliver", []byte(`{}`), now, now)
		}})
	const eventID = "evt_requeuekeepslease"
	testenv.Exec(t, b.db, `INSERT INTO webhooks (event_id, type, body, next_attempt_at, created_at) VALUES (?, 'order.paid', '{}', ?, ?)`,
		eventID, b.now, b.now)
	w, err := b.store.WebhookByEventID(b.ctx, eventID)
	if err != nil {
		t.Fatal(err)
	}
	until := b.now.Add(40 * time.Second)
	if ok, err := b.store.LeaseWebhook(b.ctx, w.ID, b.now, until); err != nil || !ok {
		t.Fatalf("first delivery's lease: %v, %v; want it taken", ok, err)
	}

	at := b.now.Add(time.Second)
	requeued, err := b.store.MoveAndQueue(b.ctx, b.store.WebhookTask(eventID, w.TaskGen+1, at), func(tx *model.Store) (bool, error) {
		return tx.BumpWebhookGen(b.ctx, w, at)
	})
	if err != nil || !requeued {
		t.Fatalf("re-queue: %v, %v; want a new generation", requeued, err)
	}
	after, err := b.store.WebhookByEventID(b.ctx, eventID)
	if err != nil {
		t.Fatal(err)
	}
	if after.TaskGen != w.TaskGen+1 {
		t.Errorf("task generation %d after the re-queue, want %d", after.TaskGen, w.TaskGen+1)
	}
	if after.LeaseUntil == nil || !after.LeaseUntil.Equal(until) {
		t.Errorf("lease after the re-queue: %v, want the in-flight post's %v", after.LeaseUntil, until)
	}
	if ok, err := b.store.LeaseWebhook(b.ctx, w.ID, b.now.Add(2*time.Second), b.now.Add(42*time.Second)); err != nil || ok {
		t.Errorf("the new generation leased a webhook whose post is in flight (%v, %v)", ok, err)
	}
	// Once the lease has run out, the new generation takes it.
	if ok, err := b.store.LeaseWebhook(b.ctx, w.ID, until.Add(time.Millisecond), until.Add(time.Minute)); err != nil || !ok {
		t.Errorf("an expired lease was not taken: %v, %v", ok, err)
	}
}
