package statement

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/domain/trail"
	"orderflow/internal/infra/tasks"
	"orderflow/model"

	"go.uber.org/zap"
)

// StatementRun is the trail's action of an operator's run.
const actionRun = "statement_run"

// Open queues a run of provider's statement of day, with its task in the
// same transaction, or answers the run of that provider and day already
// queued or running. The day must be over in the provider's calendar.
func (s *Service) Open(ctx context.Context, provider, day string) (*model.StatementRun, error) {
	src, ok := s.source(provider)
	if !ok {
		return nil, ErrUnknownProvider
	}
	_, to, err := window(day, src.StatementZone())
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	if to.After(now) {
		return nil, ErrInvalidDate
	}
	r := &model.StatementRun{Provider: provider, Day: day, CreatedAt: now}
	err = s.store.InTx(ctx, func(tx *model.Store) error {
		fresh, err := tx.InsertStatementRun(ctx, r)
		if err != nil {
			return err
		}
		if !fresh {
			cur, err := tx.ActiveStatementRun(ctx, provider, day)
			if err != nil {
				return err
			}
			*r = *cur
			return nil
		}
		if err := tx.InsertOutboxLater(ctx, runTask(r.ID, 1, now)); err != nil {
			return err
		}
		return trail.Record(ctx, tx, now, actionRun, provider+":"+day, trail.Detail{"run_id": r.ID})
	})
	if err != nil {
		return nil, fmt.Errorf("open %s statement run of %s: %w", provider, day, err)
	}
	return r, nil
}

// runTask is the outbox row of generation gen of a run's task.
func runTask(runID int64, gen int, now time.Time) *model.OutboxRow {
	return model.TaskRow(TaskID(runID, gen), tasks.TypeStatementRun, tasks.Encode(tasks.StatementPayload{RunID: runID}), now, now)
}

// TaskID is the task ID of generation gen of a run's task.
func TaskID(runID int64, gen int) string {
	return tasks.ID(tasks.TypeStatementRun, strconv.FormatInt(runID, 10), gen)
}

// Requeue queues the next generation of an unfinished run's task whose
// current one is lost (the sweep's call); false when the run finished.
func (s *Service) Requeue(ctx context.Context, r *model.StatementRun) (bool, error) {
	gen := r.TaskGen + 1
	ok, err := s.store.MoveAndQueue(ctx, runTask(r.ID, gen, s.clock.Now()), func(tx *model.Store) (bool, error) {
		return tx.BumpStatementRunGen(ctx, r.ID, gen)
	})
	if err != nil {
		return false, fmt.Errorf("requeue statement run %d: %w", r.ID, err)
	}
	return ok, nil
}

// Scheduled is the daily job: for every provider that publishes
// statements, a run of yesterday (in the provider's calendar) and of the
// look-back days before it, since providers add late lines.
func (s *Service) Scheduled(ctx context.Context) error {
	now := s.clock.Now()
	var errs []error
	for _, name := range s.Providers() {
		src, _ := s.source(name)
		today := now.In(src.StatementZone())
		for back := 1; back <= 1+s.lookback; back++ {
			day := today.AddDate(0, 0, -back).Format(dayLayout)
			r, err := s.Open(ctx, name, day)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			s.log.Info("statement run queued", zap.String("provider", name), zap.String("day", day), zap.Int64("run_id", r.ID))
		}
	}
	return errors.Join(errs...)
}

// Run is a run's task: it starts the run, reads and matches the day, and
// finishes it with the statement's totals. A try that fails (the provider
// unreachable, the day not published yet) is retried by its task; the last
// try (retried == maxRetry) fails the run and alerts the admin. A crash
// mid-run leaves it running, and the next try reads the day again: every
// effect of a line is keyed, so nothing happens twice.
func (s *Service) Run(ctx context.Context, runID int64, retried, maxRetry int) error {
	r, err := s.store.StatementRunByID(ctx, runID)
	if errors.Is(err, model.ErrNotFound) {
		return apperr.Final(fmt.Errorf("statement run %d: %w", runID, err))
	}
	if err != nil {
		return fmt.Errorf("statement run %d: %w", runID, err)
	}
	if model.StatementRunMachine.Terminal(r.Status) {
		return nil
	}
	log := s.log.With(zap.String("provider", r.Provider), zap.String("day", r.Day), zap.Int64("run_id", r.ID))
	src, ok := s.source(r.Provider)
	if !ok {
		return s.fail(ctx, r, "provider not enabled, or it publishes no statement", log)
	}
	now := s.clock.Now()
	if r.Status == model.StatementQueued {
		if _, err := s.store.StartStatementRun(ctx, r.ID, now); err != nil {
			return fmt.Errorf("statement run %d: start: %w", r.ID, err)
		}
		r.Status = model.StatementRunning
	}
	m := &matcher{s: s, run: r, log: log}
	totals, err := m.day(ctx, src)
	if err != nil {
		if retried >= maxRetry {
			return s.fail(ctx, r, err.Error(), log)
		}
		log.Warn("statement run try failed; retried", zap.Int("retried", retried), zap.Error(err))
		if nerr := s.store.NoteStatementRunError(ctx, r.ID, err.Error()); nerr != nil {
			log.Warn("statement run error not recorded", zap.Error(nerr))
		}
		return fmt.Errorf("statement run %d (%s %s): %w", r.ID, r.Provider, r.Day, err)
	}
	if _, err := s.store.FinishStatementRun(ctx, r.ID, totals, s.clock.Now()); err != nil {
		return fmt.Errorf("statement run %d: finish: %w", r.ID, err)
	}
	log.Info("statement run done", zap.Int64("lines", totals.ProviderLines), zap.Int64("matched", totals.Matched),
		zap.Int64("breaks", m.breaks))
	return nil
}

// fail ends a run that cannot succeed, alerting the admin once per run.
func (s *Service) fail(ctx context.Context, r *model.StatementRun, msg string, log *zap.Logger) error {
	now := s.clock.Now()
	err := s.store.InTx(ctx, func(tx *model.Store) error {
		moved, err := tx.FailStatementRun(ctx, r.ID, r.Status, msg, now)
		if err != nil || !moved {
			return err
		}
		return tx.InsertNotification(ctx, &model.Notification{
			NotifyID: "statement-failed:" + strconv.FormatInt(r.ID, 10), Kind: NotifyFailed, Recipient: "admin", CreatedAt: now,
			Subject: fmt.Sprintf("The %s statement of %s could not be read", r.Provider, r.Day),
			Message: fmt.Sprintf("statement run %d (%s, %s) failed: %s; run the day again once the provider answers", r.ID, r.Provider, r.Day, msg),
		})
	})
	if err != nil {
		return fmt.Errorf("statement run %d: fail: %w", r.ID, err)
	}
	log.Error("statement run failed; admin alerted", zap.String("error", msg))
	return nil
}

// RunView is a run as the admin API shows it.
type RunView struct {
	Run    *model.StatementRun
	Breaks map[string]int64 // the breaks this run listed first, by kind
}

// Get is one run with the breaks it listed.
func (s *Service) Get(ctx context.Context, runID int64) (*RunView, error) {
	r, err := s.store.StatementRunByID(ctx, runID)
	if r, err = model.Found(r, err, ErrRunNotFound, "statement run %d", runID); err != nil {
		return nil, err
	}
	counts, err := s.store.RunBreakCounts(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("statement run %d: breaks: %w", runID, err)
	}
	return &RunView{Run: r, Breaks: counts}, nil
}

// Latest lists the newest runs, for the console.
func (s *Service) Latest(ctx context.Context, limit int) ([]model.StatementRun, error) {
	out, err := s.store.StatementRunsLatest(ctx, limit)
	if err != nil {
		return nil, fmt.Errorf("statement runs: %w", err)
	}
	return out, nil
}
