package model

import (
	"context"
	"time"
)

// Event is one status move in the history of an order, refund or group.
type Event struct {
	ID         int64     `json:"-"`
	ObjectType string    `json:"object"`
	ObjectNo   string    `json:"object_no"`
	FromStatus string    `json:"from"`
	ToStatus   string    `json:"to"`
	Reason     string    `json:"reason"`
	CreatedAt  time.Time `json:"at"`
}

// InsertEventLater appends to the event history; inside a transaction the
// row waits for the next statement's round trip.
func (s *Store) InsertEventLater(ctx context.Context, e Event) error {
	return s.later(ctx, `INSERT INTO events (object_type, object_no, from_status, to_status, reason, created_at) VALUES (?, ?, ?, ?, ?, ?)`, e.args()...)
}

// insertEventIfMoved follows a status UPDATE in the same MySQL batch: it
// writes the event only if that UPDATE changed a row (ROW_COUNT() is the
// previous statement's), and its own row count answers "did it move".
const insertEventIfMoved = `INSERT INTO events (object_type, object_no, from_status, to_status, reason, created_at)
 SELECT ?, ?, ?, ?, ?, ? FROM DUAL WHERE ROW_COUNT() > 0`

func (e Event) args() []any {
	return []any{e.ObjectType, e.ObjectNo, e.FromStatus, e.ToStatus, e.Reason, e.CreatedAt}
}

// EventsFor returns an object's history, oldest first.
func (s *Store) EventsFor(ctx context.Context, objectType, objectNo string) ([]Event, error) {
	return rowsOf[Event](ctx, s, `SELECT * FROM events WHERE object_type = ? AND object_no = ? ORDER BY id`, objectType, objectNo)
}
