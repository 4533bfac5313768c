package model

import (
	"context"
	"time"
)

// StatementRun is one run of one provider's statement for one of its days
// (internal/domain/statement). The totals are the statement's own.
type StatementRun struct {
	ID            int64
	Provider      string
	Day           string // YYYY-MM-DD, the provider's calendar day
	Status        StatementRunStatus
	Active        *int // 1 while queued or running: one such run per provider and day
	TaskGen       int  // the generation of its task (the sweep re-queues a lost one under the next)
	ProviderLines int64
	Matched       int64
	Payments      int64
	GrossCents    int64
	Refunds       int64
	RefundsCents  int64
	DisputesCents int64
	FeesCents     int64
	Error         string
	CreatedAt     time.Time
	StartedAt     *time.Time
	FinishedAt    *time.Time
}

// StatementTotals are what a run read from the statement.
type StatementTotals struct {
	ProviderLines, Matched, Payments, GrossCents, Refunds, RefundsCents, DisputesCents, FeesCents int64
}

// InsertStatementRun records a queued run and reports false when a run of
// the same provider and day is already queued or running (the unique key
// on active): the caller answers that one.
func (s *Store) InsertStatementRun(ctx context.Context, r *StatementRun) (bool, error) {
	fresh, err := s.insertIgnoringDuplicate(ctx,
		`INSERT INTO statement_runs (provider, day, status, active, created_at) VALUES (?, ?, ?, 1, ?)`,
		r.Provider, r.Day, StatementQueued, r.CreatedAt)
	if err != nil || !fresh {
		return false, err
	}
	cur, err := s.ActiveStatementRun(ctx, r.Provider, r.Day)
	if err != nil {
		return false, err
	}
	*r = *cur
	return true, nil
}

// ActiveStatementRun loads the run of provider and day that is queued or
// running, or ErrNotFound.
func (s *Store) ActiveStatementRun(ctx context.Context, provider, day string) (*StatementRun, error) {
	return rowOf[StatementRun](ctx, s, `SELECT * FROM statement_runs WHERE provider = ? AND day = ? AND active = 1`, provider, day)
}

// StatementRunByID loads one run.
func (s *Store) StatementRunByID(ctx context.Context, id int64) (*StatementRun, error) {
	return rowOf[StatementRun](ctx, s, `SELECT * FROM statement_runs WHERE id = ?`, id)
}

// StartStatementRun moves a queued run to running; false when it was not
// queued (a re-run of its task after a crash finds it running already).
func (s *Store) StartStatementRun(ctx context.Context, id int64, at time.Time) (bool, error) {
	if err := StatementRunMachine.Check("run", StatementQueued, StatementRunning); err != nil {
		return false, err
	}
	n, err := s.exec(ctx, `UPDATE statement_runs SET status = ?, started_at = ? WHERE id = ? AND status = ?`,
		StatementRunning, at, id, StatementQueued)
	return n == 1, err
}

// FinishStatementRun moves a running run to done with its totals; false
// when it was not running (another try of its task finished it first).
func (s *Store) FinishStatementRun(ctx context.Context, id int64, t StatementTotals, at time.Time) (bool, error) {
	if err := StatementRunMachine.Check("run", StatementRunning, StatementDone); err != nil {
		return false, err
	}
	n, err := s.exec(ctx, `UPDATE statement_runs SET status = ?, active = NULL, finished_at = ?, error = '',
		provider_lines = ?, matched = ?, payments = ?, gross_cents = ?, refunds = ?, refunds_cents = ?, disputes_cents = ?, fees_cents = ?
		WHERE id = ? AND status = ?`,
		StatementDone, at, t.ProviderLines, t.Matched, t.Payments, t.GrossCents, t.Refunds, t.RefundsCents, t.DisputesCents, t.FeesCents,
		id, StatementRunning)
	return n == 1, err
}

// FailStatementRun moves a queued or running run to failed with the
// error that ended it; false when it had finished already.
func (s *Store) FailStatementRun(ctx context.Context, id int64, from StatementRunStatus, msg string, at time.Time) (bool, error) {
	if err := StatementRunMachine.Check("run", from, StatementFailed); err != nil {
		return false, err
	}
	n, err := s.exec(ctx, `UPDATE statement_runs SET status = ?, active = NULL, finished_at = ?, error = ? WHERE id = ? AND status = ?`,
		StatementFailed, at, clip(msg, 512), id, from)
	return n == 1, err
}

// NoteStatementRunError records the error of a try that will be retried.
func (s *Store) NoteStatementRunError(ctx context.Context, id int64, msg string) error {
	_, err := s.exec(ctx, `UPDATE statement_runs SET error = ? WHERE id = ? AND active = 1`, clip(msg, 512), id)
	return err
}

// BumpStatementRunGen moves an unfinished run's task to generation gen
// (the caller queues it in the same transaction); false when the run
// finished or another re-queue took that generation.
func (s *Store) BumpStatementRunGen(ctx context.Context, id int64, gen int) (bool, error) {
	n, err := s.exec(ctx, `UPDATE statement_runs SET task_gen = ? WHERE id = ? AND task_gen = ? AND active = 1`, gen, id, gen-1)
	return n == 1, err
}

// ActiveStatementRunsPage lists the runs queued or running before t, in
// id order after afterID: the sweep's walk.
func (s *Store) ActiveStatementRunsPage(ctx context.Context, before time.Time, afterID int64, limit int) ([]StatementRun, error) {
	return rowsOf[StatementRun](ctx, s, `SELECT * FROM statement_runs WHERE active = 1 AND created_at < ? AND id > ? ORDER BY id LIMIT ?`,
		before, afterID, limit)
}

// StatementRunsLatest lists the newest runs, newest first.
func (s *Store) StatementRunsLatest(ctx context.Context, limit int) ([]StatementRun, error) {
	return rowsOf[StatementRun](ctx, s, `SELECT * FROM statement_runs ORDER BY id DESC LIMIT ?`, limit)
}

// LastGoodStatementRuns maps each provider to the finish time of its
// latest done run.
func (s *Store) LastGoodStatementRuns(ctx context.Context) (map[string]time.Time, error) {
	var rows []struct {
		Provider string
		At       time.Time
	}
	err := s.all(ctx, &rows, `SELECT provider, MAX(finished_at) AS at FROM statement_runs WHERE status = ? GROUP BY provider`, StatementDone)
	out := make(map[string]time.Time, len(rows))
	for _, r := range rows {
		out[r.Provider] = r.At
	}
	return out, err
}

// clip cuts s to at most n bytes.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
