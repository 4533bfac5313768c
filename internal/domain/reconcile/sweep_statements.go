package reconcile

import (
	"context"

	"orderflow/internal/domain/statement"
	"orderflow/model"
)

// statementRuns: a queued or running statement run's task (lost with
// Redis, or archived after a crash on its last try) is queued again under
// the next generation; the run reads its day again and changes nothing twice.
func (s *Sweeper) statementRuns(ctx context.Context, w walkAt, limit int) ([]object, error) {
	if s.Statements == nil {
		return nil, nil
	}
	runs, err := s.Store.ActiveStatementRunsPage(ctx, w.start, w.cur.ID, limit)
	return objectsOf(runs, err, func(r *model.StatementRun) object {
		return object{cur: model.Cursor{ID: r.ID}, taskID: statement.TaskID(r.ID, r.TaskGen),
			requeue: func(ctx context.Context) (bool, error) { return s.Statements.Requeue(ctx, r) }}
	})
}
