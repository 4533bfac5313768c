package model

import (
	"context"
	"time"
)

// ClaimPeriodicSlot records that a periodic job's run for one slot is under
// way and reports false when another run (another worker's Scheduler, a
// catch-up at start) claimed that slot first: the primary key (job, slot_at)
// is what makes a periodic job run once per slot across the fleet. by is
// the claiming task's ID, so the same task's retry (asynq retrying a failed
// run, or re-running one whose worker died) finds its own claim and goes on.
func (s *Store) ClaimPeriodicSlot(ctx context.Context, job string, slot time.Time, by string, at time.Time) (bool, error) {
	fresh, err := s.insertIgnoringDuplicate(ctx,
		`INSERT INTO periodic_slots (job, slot_at, claimed_by, claimed_at) VALUES (?, ?, ?, ?)`,
		job, slot.UTC(), by, at.UTC())
	if fresh || err != nil {
		return fresh, err
	}
	var n int64
	err = s.first(ctx, &n, `SELECT COUNT(*) FROM periodic_slots WHERE job = ? AND slot_at = ? AND claimed_by = ?`, job, slot.UTC(), by)
	return n > 0, err
}

// PrunePeriodicSlots deletes a job's claims of slots before a time: only
// the latest is ever read (the catch-up check), and a fast job claims a
// slot a minute.
func (s *Store) PrunePeriodicSlots(ctx context.Context, job string, before time.Time) (int64, error) {
	return s.exec(ctx, `DELETE FROM periodic_slots WHERE job = ? AND slot_at < ?`, job, before.UTC())
}

// LastPeriodicSlots is each job's latest claimed slot (jobs never claimed
// are absent).
func (s *Store) LastPeriodicSlots(ctx context.Context) (map[string]time.Time, error) {
	var rows []struct {
		Job  string
		Last nullTime // an aggregate: SQLite returns it as text
	}
	if err := s.all(ctx, &rows, `SELECT job, MAX(slot_at) AS last FROM periodic_slots GROUP BY job`); err != nil {
		return nil, err
	}
	out := make(map[string]time.Time, len(rows))
	for _, r := range rows {
		if r.Last.Valid {
			out[r.Job] = r.Last.Time.UTC()
		}
	}
	return out, nil
}

// PeriodicClaims counts a job's claimed slots from a time on (the tests'
// and the audit's view of "once per slot").
func (s *Store) PeriodicClaims(ctx context.Context, job string, from time.Time) (int64, error) {
	var n int64
	err := s.first(ctx, &n, `SELECT COUNT(*) FROM periodic_slots WHERE job = ? AND slot_at >= ?`, job, from.UTC())
	return n, err
}
