package model

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// AuditEntry is one admin action in the audit trail: who (Actor, the
// operator's name) did what (Action) to which order, refund or group
// (Object), and what changed (Detail, a JSON object).
type AuditEntry struct {
	ID     int64           `json:"-"`
	At     time.Time       `json:"at"`
	Actor  string          `json:"actor"`
	Action string          `json:"action"`
	Object string          `json:"object"`
	Detail json.RawMessage `json:"detail"`
}

// AuditPage bounds one read of an object's trail.
const AuditPage = 500

// InsertAuditLater appends to the audit trail. Called inside the
// transaction of the action's effect, after the conditional move that
// made it, so the entry commits or rolls back with the effect; inside a
// MySQL transaction the row waits for the next statement's round trip.
func (s *Store) InsertAuditLater(ctx context.Context, e AuditEntry) error {
	detail := e.Detail
	if len(detail) == 0 {
		detail = json.RawMessage(`{}`)
	}
	if !json.Valid(detail) {
		return fmt.Errorf("audit %s of %s: detail is not JSON", e.Action, e.Object)
	}
	return s.later(ctx, `INSERT INTO audit_entries (at, actor, action, object, detail) VALUES (?, ?, ?, ?, ?)`,
		e.At.UTC(), e.Actor, e.Action, e.Object, string(detail))
}

// AuditFor is an object's audit trail, oldest first, at most AuditPage
// entries.
func (s *Store) AuditFor(ctx context.Context, object string) ([]AuditEntry, error) {
	return s.AuditForAll(ctx, []string{object})
}

// AuditForAll is the audit trail of several objects at once (an order
// and its refunds, for its story: one read, not one per refund), oldest
// first, at most AuditPage entries.
func (s *Store) AuditForAll(ctx context.Context, objects []string) ([]AuditEntry, error) {
	if len(objects) == 0 {
		return nil, nil
	}
	args := make([]any, 0, len(objects)+1)
	for _, o := range objects {
		args = append(args, o)
	}
	var rows []struct {
		ID     int64
		At     time.Time
		Actor  string
		Action string
		Object string
		Detail string
	}
	err := s.all(ctx, &rows, `SELECT id, at, actor, action, object, detail FROM audit_entries WHERE object IN (`+placeholders(len(objects))+`) ORDER BY id LIMIT ?`,
		append(args, AuditPage)...)
	if err != nil {
		return nil, err
	}
	out := make([]AuditEntry, 0, len(rows))
	for _, r := range rows {
		out = append(out, AuditEntry{ID: r.ID, At: r.At.UTC(), Actor: r.Actor, Action: r.Action, Object: r.Object, Detail: json.RawMessage(r.Detail)})
	}
	return out, nil
}
