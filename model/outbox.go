package model

import (
	"context"
	"strings"
	"time"
)

// OutboxRow is a task that must reach asynq; it is written in the same
// transaction as the change that makes the task necessary.
type OutboxRow struct {
	ID        int64
	TaskID    string
	TaskType  string
	Payload   []byte
	ProcessAt time.Time
	CreatedAt time.Time
	// TraceContext is the W3C traceparent of the span that wrote the row
	// (nil when tracing is off): the relay puts it in the task's headers,
	// so the worker's span continues the writer's trace.
	TraceContext *string
}

// TaskRow builds the outbox row of a task due at processAt (zero or past:
// now). asynq keeps a scheduled task's time in whole Unix seconds and
// truncates, so a future time is rounded up to the next whole second: a
// task must never run before its time (a close while the buyer may still
// pay, a settle before the deadline). A task due now is left unrounded, or
// every activation would wait up to a second.
func TaskRow(taskID, taskType string, payload []byte, processAt, now time.Time) *OutboxRow {
	if !processAt.After(now) {
		processAt = now
	} else if t := processAt.Truncate(time.Second); t.Before(processAt) {
		processAt = t.Add(time.Second)
	}
	return &OutboxRow{TaskID: taskID, TaskType: taskType, Payload: payload, ProcessAt: processAt, CreatedAt: now}
}

// InsertOutboxLater queues a task for the relay in the caller's
// transaction: inside a MySQL transaction it waits for the next round trip
// (batch.go), and once the transaction commits the row is handed to the
// relay's fast path (aftercommit.go). A row with the same task ID already
// waiting is left as it is — the ID names the task, so that row asks for
// the same one.
func (s *Store) InsertOutboxLater(ctx context.Context, r *OutboxRow) error {
	r.CreatedAt = r.CreatedAt.UTC().Truncate(time.Millisecond) // as stored: Key() must match it
	r.TraceContext = s.stamp(ctx, r.TraceContext)
	var err error
	if s.d.sqlite {
		_, err = s.insertIgnoringDuplicate(ctx, insertOutbox, r.TaskID, r.TaskType, r.Payload, r.ProcessAt, r.CreatedAt, r.TraceContext)
	} else {
		err = s.later(ctx, insertOutbox+` ON DUPLICATE KEY UPDATE task_id = task_id`,
			r.TaskID, r.TaskType, r.Payload, r.ProcessAt, r.CreatedAt, r.TraceContext)
	}
	if err == nil {
		s.sendAfterCommit(ctx, r)
	}
	return err
}

// MoveAndQueue is the shape of every re-queue: in one transaction, move —
// a conditional move that gives the object a new task generation, and
// whatever else must commit with it (an operator's trail entry) — then,
// only if it moved, the new generation's outbox row, sent after the
// commit. false means the object had moved on and nothing was queued.
func (s *Store) MoveAndQueue(ctx context.Context, row *OutboxRow, move func(tx *Store) (bool, error)) (bool, error) {
	var moved bool
	err := s.InTx(ctx, func(tx *Store) (err error) {
		if moved, err = move(tx); err != nil || !moved {
			return err
		}
		return tx.InsertOutboxLater(ctx, row)
	})
	return moved && err == nil, err
}

const insertOutbox = `INSERT INTO outbox (task_id, task_type, payload, process_at, created_at, trace_context) VALUES (?, ?, ?, ?, ?, ?)`

// OutboxBetween returns up to limit waiting rows with afterID < id <= maxID, oldest first.
func (s *Store) OutboxBetween(ctx context.Context, afterID, maxID int64, limit int) ([]OutboxRow, error) {
	return rowsOf[OutboxRow](ctx, s, `SELECT * FROM outbox WHERE id > ? AND id <= ? ORDER BY id LIMIT ?`, afterID, maxID, limit)
}

// OutboxMaxID returns the newest waiting row's id, or 0.
func (s *Store) OutboxMaxID(ctx context.Context) (int64, error) {
	var id int64
	err := s.first(ctx, &id, `SELECT COALESCE(MAX(id), 0) FROM outbox`)
	return id, err
}

// OutboxKey names one outbox row without its id, which the writer never
// reads back: its task ID and the millisecond it was written. A later row
// with the same task ID (written after this one was gone) is not this one.
type OutboxKey struct {
	TaskID    string
	CreatedAt time.Time
}

// Key returns the row's key.
func (r *OutboxRow) Key() OutboxKey { return OutboxKey{TaskID: r.TaskID, CreatedAt: r.CreatedAt} }

// DeleteOutbox removes the rows of tasks asynq now holds.
func (s *Store) DeleteOutbox(ctx context.Context, keys []OutboxKey) error {
	if len(keys) == 0 {
		return nil
	}
	var q strings.Builder
	q.WriteString(`DELETE FROM outbox WHERE `)
	args := make([]any, 0, 2*len(keys))
	for i, k := range keys {
		if i > 0 {
			q.WriteString(" OR ")
		}
		q.WriteString(`(task_id = ? AND created_at = ?)`)
		args = append(args, k.TaskID, k.CreatedAt)
	}
	// Run on its own (the relay's store, never a transaction), the DELETE
	// can lose a deadlock to another deleter of the same rows (the fast
	// path's deleter and the sweep's push of a row it found old); the
	// engine runs a lone statement that lost again.
	_, err := s.exec(ctx, q.String(), args...)
	return err
}

// OutboxBacklog returns the number of undelivered rows and the oldest one's age.
func (s *Store) OutboxBacklog(ctx context.Context, now time.Time) (int64, time.Duration, error) {
	var r struct {
		N      int64
		Oldest nullTime // an aggregate: SQLite returns it as text
	}
	if err := s.first(ctx, &r, `SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM outbox`); err != nil {
		return 0, 0, err
	}
	if !r.Oldest.Valid {
		return r.N, 0, nil
	}
	return r.N, now.Sub(r.Oldest.Time), nil
}

// OutboxHas reports whether a task is still waiting in the outbox.
func (s *Store) OutboxHas(ctx context.Context, taskID string) (bool, error) {
	var n int64
	err := s.first(ctx, &n, `SELECT COUNT(*) FROM outbox WHERE task_id = ?`, taskID)
	return n > 0, err
}
