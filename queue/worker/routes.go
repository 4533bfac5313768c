// Package worker is the queue binary's body: the one task-type → handler
// table, the periodic jobs, the outbox poller and the worker's HTTP endpoints.
package worker

import (
	"context"
	"errors"
	"fmt"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/infra/tasks"
	"orderflow/internal/infra/tracing"
	"orderflow/svc"

	"github.com/hibiken/asynq"
	"go.uber.org/zap"
)

// routes is THE task-type → handler table.
func routes(uc *svc.UseCases, table tasks.Table, log *zap.Logger) *asynq.ServeMux {
	mux := asynq.NewServeMux()
	mux.Use(tracing.TaskMiddleware, skipFinal)
	mux.HandleFunc(tasks.TypeOrderActivate, handleOrderActivate(uc))
	mux.HandleFunc(tasks.TypeOrderClose, handleOrderClose(uc))
	mux.HandleFunc(tasks.TypeRefundExecute, handleRefundExecute(uc))
	mux.HandleFunc(tasks.TypeGroupSettle, handleGroupSettle(uc))
	mux.HandleFunc(tasks.TypeNotifyDeliver, handleNotifyDeliver(uc, log))
	mux.HandleFunc(tasks.TypePaymentQuery, handlePaymentQuery(uc))
	mux.HandleFunc(tasks.TypeWebhookDeliver, handleWebhookDeliver(uc, table))
	mux.HandleFunc(tasks.TypeSweep, handleSweep(uc))
	mux.HandleFunc(tasks.TypeReconcile, handleReconcile(uc, log))
	mux.HandleFunc(tasks.TypeStatements, handleStatements(uc))
	mux.HandleFunc(tasks.TypeStatementRun, handleStatementRun(uc))
	return mux
}

// skipFinal is the one place a domain error becomes asynq's retry or skip:
// what retrying cannot help (apperr.IsFinal: marked final by the domain, or
// its object gone) wraps asynq.SkipRetry, so asynq archives the task at
// once; anything else is retried on the task's schedule.
func skipFinal(h asynq.Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		err := h.ProcessTask(ctx, t)
		if err != nil && apperr.IsFinal(err) && !errors.Is(err, asynq.SkipRetry) {
			return fmt.Errorf("%s: %w: %w", t.Type(), err, asynq.SkipRetry)
		}
		return err
	})
}

// decoded is a handler that decodes the task's payload P and hands it to
// run; a payload that does not decode is tasks.Decode's error (final, never
// retried).
func decoded[P any](run func(ctx context.Context, p P) error) asynq.HandlerFunc {
	return func(ctx context.Context, t *asynq.Task) error {
		var p P
		if err := tasks.Decode(t, &p); err != nil {
			return err
		}
		return run(ctx, p)
	}
}

func handleOrderClose(uc *svc.UseCases) asynq.HandlerFunc {
	return decoded(func(ctx context.Context, p tasks.OrderPayload) error {
		return uc.Orders.Expire(ctx, p.OrderNo)
	})
}

func handleRefundExecute(uc *svc.UseCases) asynq.HandlerFunc {
	return decoded(func(ctx context.Context, p tasks.RefundPayload) error {
		return uc.Refunds.Execute(ctx, p.RefundNo, p.Gen)
	})
}

func handleGroupSettle(uc *svc.UseCases) asynq.HandlerFunc {
	return decoded(func(ctx context.Context, p tasks.GroupPayload) error {
		retried, _ := asynq.GetRetryCount(ctx)
		maxRetry, _ := asynq.GetMaxRetry(ctx)
		return uc.Groups.Settle(ctx, p.GroupNo, p.Manual, retried, maxRetry)
	})
}

// handleNotifyDeliver first writes settlements that ran out of budget while
// the database was down (the Redis pending set), then drains the list.
func handleNotifyDeliver(uc *svc.UseCases, log *zap.Logger) asynq.HandlerFunc {
	return func(ctx context.Context, _ *asynq.Task) error {
		if _, err := uc.Groups.FlushExhausted(ctx); err != nil {
			log.Warn("pending set not flushed yet", zap.Error(err))
		}
		res, err := uc.Notifier.Deliver(ctx)
		if res.Delivered+res.Failed > 0 {
			log.Info("notification round", zap.Int("delivered", res.Delivered), zap.Int("failed", res.Failed))
		}
		return err
	}
}

// handleWebhookDeliver posts one shop webhook. A failed post is recorded
// with the time asynq will retry it (this task's schedule), so the
// operator's list shows when the next try comes.
func handleWebhookDeliver(uc *svc.UseCases, table tasks.Table) asynq.HandlerFunc {
	return decoded(func(ctx context.Context, p tasks.WebhookPayload) error {
		retried, _ := asynq.GetRetryCount(ctx)
		return uc.Webhooks.Deliver(ctx, p.EventID, table[tasks.TypeWebhookDeliver].Delay(retried))
	})
}

func handleReconcile(uc *svc.UseCases, log *zap.Logger) asynq.HandlerFunc {
	return func(ctx context.Context, _ *asynq.Task) error {
		rep, err := uc.Reconciler.Run(ctx)
		log.Info("reconciliation pass", zap.Any("report", rep), zap.Error(err))
		return err
	}
}

func handleOrderActivate(uc *svc.UseCases) asynq.HandlerFunc {
	return decoded(func(ctx context.Context, p tasks.OrderPayload) error {
		taskID, _ := asynq.GetTaskID(ctx)
		return uc.Orders.Activate(ctx, p.OrderNo, taskID)
	})
}

// handleSweep runs one sweep pass; the pass logs its own report.
func handleSweep(uc *svc.UseCases) asynq.HandlerFunc {
	return func(ctx context.Context, _ *asynq.Task) error {
		_, err := uc.Sweeper.Pass(ctx)
		return err
	}
}

// handlePaymentQuery asks a pending order's providers about its started
// payments (a lost notification); a confirmed one is applied by Pay.
func handlePaymentQuery(uc *svc.UseCases) asynq.HandlerFunc {
	return decoded(func(ctx context.Context, p tasks.OrderPayload) error {
		return uc.Orders.RecoverPayment(ctx, p.OrderNo)
	})
}

// handleStatements is the daily job: a run of yesterday and the look-back
// days for every provider that publishes statements.
func handleStatements(uc *svc.UseCases) asynq.HandlerFunc {
	return func(ctx context.Context, _ *asynq.Task) error {
		return uc.Statements.Scheduled(ctx)
	}
}

// handleStatementRun reads and matches one run's day; its last try fails
// the run (asynq's count, so it survives a crashed worker).
func handleStatementRun(uc *svc.UseCases) asynq.HandlerFunc {
	return decoded(func(ctx context.Context, p tasks.StatementPayload) error {
		retried, _ := asynq.GetRetryCount(ctx)
		maxRetry, _ := asynq.GetMaxRetry(ctx)
		return uc.Statements.Run(ctx, p.RunID, retried, maxRetry)
	})
}
