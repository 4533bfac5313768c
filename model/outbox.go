package model

import (
	"context"
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
}

// InsertOutbox queues a task for the relay and sets r.ID to the new row's
// id. A row with the same task ID already queued is left as it is, and r.ID
// is 0: that row is its writer's (or the poller's) to deliver.
func (s *Store) InsertOutbox(ctx context.Context, r *OutboxRow) error {
	id, err := s.insert(ctx,
		`INSERT INTO outbox (task_id, task_type, payload, process_at, created_at) VALUES (?, ?, ?, ?, ?)`,
		r.TaskID, r.TaskType, r.Payload, r.ProcessAt, r.CreatedAt)
	if IsDuplicate(err) {
		id, err = 0, nil
	}
	r.ID = id
	return err
}

// OutboxBatch returns up to limit rows, oldest first, optionally only those with the given task IDs.
func (s *Store) OutboxBatch(ctx context.Context, taskIDs []string, limit int) ([]OutboxRow, error) {
	var out []OutboxRow
	if len(taskIDs) > 0 {
		err := s.all(ctx, &out, `SELECT * FROM outbox WHERE task_id IN ? ORDER BY id LIMIT ?`, taskIDs, limit)
		return out, err
	}
	err := s.all(ctx, &out, `SELECT * FROM outbox ORDER BY id LIMIT ?`, limit)
	return out, err
}

// DeleteOutbox removes rows whose tasks asynq now holds, by primary key.
func (s *Store) DeleteOutbox(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.exec(ctx, `DELETE FROM outbox WHERE id IN ?`, ids)
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
