package model

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// Webhook is one shop event (SPEC "Shop webhooks") waiting for, or past,
// its delivery: written by the move that causes it, in the move's
// transaction, so a committed move always has its event and a rolled-back
// one never does.
type Webhook struct {
	ID      int64
	EventID string // the public, stable id: every redelivery carries it
	Type    string
	// Body is the exact JSON posted, built once at the move: a redelivery
	// is byte-identical, so a receiver can deduplicate by id or by body.
	Body          []byte
	Attempts      int
	LastError     string
	NextAttemptAt time.Time
	DeliveredAt   *time.Time
	LeaseUntil    *time.Time
	TaskGen       int
	CreatedAt     time.Time
}

// Webhook statuses as the operator reads them; derived from the columns,
// not stored (a delivery only ever sets delivered_at or counts a failure).
const (
	WebhookPending   = "pending"   // not delivered, no failed attempt yet
	WebhookFailing   = "failing"   // not delivered, at least one attempt failed
	WebhookDelivered = "delivered" // a 2xx acknowledged it
)

// Status derives the operator's status.
func (w *Webhook) Status() string {
	switch {
	case w.DeliveredAt != nil:
		return WebhookDelivered
	case w.Attempts > 0:
		return WebhookFailing
	}
	return WebhookPending
}

// WebhookTaskFunc builds the outbox row of the task that delivers a
// webhook (its event id and task generation).
type WebhookTaskFunc func(eventID string, gen int, now time.Time) *OutboxRow

// Webhooks is what the ledger needs to write shop events: EventFor names
// the event a happening causes ("" for none: the domain's rule,
// webhook.EventFor) and Task builds its delivery task's row. svc installs
// them when webhooks are on; without them no move writes one.
type Webhooks struct {
	EventFor func(object, from, to string) string
	Task     WebhookTaskFunc
}

// SetWebhooks turns webhooks on. Call it once, before the Store is shared,
// like SetAfterCommit.
func (s *Store) SetWebhooks(w Webhooks) { s.hooks = &w }

// webhookBody is what a receiver gets. Data names the object and its new
// status and never carries card codes or keys: a receiver that needs the
// delivery reads the order with the buyer's token.
type webhookBody struct {
	ID        string         `json:"id"`
	Type      string         `json:"type"`
	CreatedAt time.Time      `json:"created_at"`
	Data      map[string]any `json:"data"`
}

// webhookForMoveLater writes the event a move causes (if any, and if
// webhooks are on) with its delivery task, in the move's transaction. The
// move functions call it once their UPDATE is known to move the row (or
// aborts the transaction if it does not), so no caller can forget it.
func (s *Store) webhookForMoveLater(ctx context.Context, object, from, to string, at time.Time, data map[string]any) error {
	if s.hooks == nil {
		return nil
	}
	typ := s.hooks.EventFor(object, from, to)
	if typ == "" {
		return nil
	}
	data["status"], data["previous_status"] = to, from
	return s.webhookLater(ctx, typ, at, data)
}

// webhookForNewLater writes the event a new object causes (a dispute, a
// statement break: no status move of ours), if any and if webhooks are on.
func (s *Store) webhookForNewLater(ctx context.Context, object, status string, at time.Time, data map[string]any) error {
	if s.hooks == nil {
		return nil
	}
	if typ := s.hooks.EventFor(object, "", status); typ != "" {
		return s.webhookLater(ctx, typ, at, data)
	}
	return nil
}

// webhookLater writes one event of type typ with its delivery task, in the
// caller's transaction; webhooks are on.
func (s *Store) webhookLater(ctx context.Context, typ string, at time.Time, data map[string]any) error {
	id, err := newEventID()
	if err != nil {
		return err
	}
	at = at.UTC().Truncate(time.Millisecond)
	body, err := json.Marshal(webhookBody{ID: id, Type: typ, CreatedAt: at, Data: data})
	if err != nil {
		return fmt.Errorf("webhook %s body: %w", typ, err)
	}
	if err := s.later(ctx,
		`INSERT INTO webhooks (event_id, type, body, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?)`,
		id, typ, body, at, at); err != nil {
		return err
	}
	return s.InsertOutboxLater(ctx, s.hooks.Task(id, 0, at))
}

// newEventID is a random, unguessable event id ("evt_" and 24 hex digits).
func newEventID() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("webhook event id: %w", err)
	}
	return "evt_" + hex.EncodeToString(b[:]), nil
}

// WebhookByEventID loads a webhook by its public id.
func (s *Store) WebhookByEventID(ctx context.Context, eventID string) (*Webhook, error) {
	return rowOf[Webhook](ctx, s, `SELECT * FROM webhooks WHERE event_id = ?`, eventID)
}

// ListWebhooks pages webhooks newest first, optionally of one status
// (WebhookPending, WebhookFailing, WebhookDelivered; "" for all).
func (s *Store) ListWebhooks(ctx context.Context, status string, limit int) ([]Webhook, error) {
	q := `SELECT * FROM webhooks`
	switch status {
	case WebhookDelivered:
		q += ` WHERE delivered_at IS NOT NULL`
	case WebhookFailing:
		q += ` WHERE delivered_at IS NULL AND attempts > 0`
	case WebhookPending:
		q += ` WHERE delivered_at IS NULL AND attempts = 0`
	}
	return rowsOf[Webhook](ctx, s, q+` ORDER BY id DESC LIMIT ?`, limit)
}

// UndeliveredWebhooksPage is the sweep's page of webhooks not yet
// delivered, written before `before`, after the id afterID, by id.
func (s *Store) UndeliveredWebhooksPage(ctx context.Context, before time.Time, afterID int64, limit int) ([]Webhook, error) {
	return rowsOf[Webhook](ctx, s, `SELECT * FROM webhooks WHERE delivered_at IS NULL AND id > ? AND created_at < ? ORDER BY id LIMIT ?`,
		afterID, before, limit)
}

// LeaseWebhook claims an undelivered webhook for one post until `until`;
// false means it was delivered or another delivery holds it.
func (s *Store) LeaseWebhook(ctx context.Context, id int64, now, until time.Time) (bool, error) {
	return s.leaseDelivery(ctx, "webhooks", id, now, until)
}

// leaseDelivery is the one lease of the two delivery tables (webhooks,
// notifications): row id, while undelivered and not leased past now, is
// held until `until`; false means it was delivered or another holds it.
func (s *Store) leaseDelivery(ctx context.Context, table string, id int64, now, until time.Time) (bool, error) {
	n, err := s.exec(ctx,
		`UPDATE `+table+` SET lease_until = ? WHERE id = ? AND delivered_at IS NULL AND (lease_until IS NULL OR lease_until < ?)`,
		until, id, now)
	return n == 1, err
}

// MarkWebhookDelivered records the receiver's 2xx once.
func (s *Store) MarkWebhookDelivered(ctx context.Context, id int64, at time.Time) error {
	_, err := s.exec(ctx,
		`UPDATE webhooks SET delivered_at = ?, lease_until = NULL, attempts = attempts + 1, last_error = '' WHERE id = ? AND delivered_at IS NULL`,
		at, id)
	return err
}

// NoteWebhookFailure records a failed post, when the next one is due, and
// drops the lease; the row stays undelivered.
func (s *Store) NoteWebhookFailure(ctx context.Context, id int64, why string, next time.Time) error {
	_, err := s.exec(ctx,
		`UPDATE webhooks SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?, lease_until = NULL WHERE id = ? AND delivered_at IS NULL`,
		clip(why, 255), next, id)
	return err
}

// BumpWebhookGen gives an undelivered webhook a new delivery task
// generation due now (the sweep, for one whose task was lost or archived;
// an operator's retry); the caller queues that generation's task in the
// same transaction (MoveAndQueue with WebhookTask). A lease is left as it
// is: a post in flight keeps it until its outcome is written, and the new
// task waits for that (or for the lease to run out, when the post's worker
// died), so two posts of one event never overlap. false means it was
// delivered meanwhile or someone else re-queued it first.
func (s *Store) BumpWebhookGen(ctx context.Context, w *Webhook, now time.Time) (bool, error) {
	n, err := s.exec(ctx,
		`UPDATE webhooks SET task_gen = ?, next_attempt_at = ? WHERE id = ? AND task_gen = ? AND delivered_at IS NULL`,
		w.TaskGen+1, now, w.ID, w.TaskGen)
	return n == 1, err
}

// WebhookTask is the delivery task of an event's generation gen, due at
// (svc's task table builds it: SetWebhooks); nil when webhooks are off.
func (s *Store) WebhookTask(eventID string, gen int, at time.Time) *OutboxRow {
	if s.hooks == nil {
		return nil
	}
	return s.hooks.Task(eventID, gen, at)
}
