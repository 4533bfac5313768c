package model

import (
	"context"
	"time"
)

// StartConsoleSession records a console log-in whose cookie expires at
// expires, and deletes the sessions already expired at `at` (their cookies
// are refused before any read, so the rows only cost space).
func (s *Store) StartConsoleSession(ctx context.Context, id string, at, expires time.Time) error {
	if _, err := s.exec(ctx, `INSERT INTO console_sessions (id, created_at, expires_at) VALUES (?, ?, ?)`, id, at.UTC(), expires.UTC()); err != nil {
		return err
	}
	_, err := s.exec(ctx, `DELETE FROM console_sessions WHERE expires_at < ?`, at.UTC())
	return err
}

// ConsoleSessionLive reports whether a console session was started and
// has not ended: one primary-key read, made by every console request.
func (s *Store) ConsoleSessionLive(ctx context.Context, id string) (bool, error) {
	var n int64
	err := s.first(ctx, &n, `SELECT COUNT(*) FROM console_sessions WHERE id = ? AND ended_at IS NULL`, id)
	return n > 0, err
}

// EndConsoleSession ends a live console session (the log-out); false: it
// had ended already (another tab's log-out) or was never started.
func (s *Store) EndConsoleSession(ctx context.Context, id string, at time.Time) (bool, error) {
	n, err := s.exec(ctx, `UPDATE console_sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL`, at.UTC(), id)
	return n == 1, err
}
