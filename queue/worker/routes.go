// Package worker is the queue binary's body: the one task-type → handler
// table, the periodic jobs, the outbox poller and the worker's HTTP endpoints.
package worker

import (
	"context"
	"fmt"

	"orderflow/svc"
	"orderflow/tasks"

	"github.com/hibiken/asynq"
	"go.uber.org/zap"
)

// routes is THE task-type → handler table.
func routes(uc *svc.UseCases, log *zap.Logger) *asynq.ServeMux {
	mux := asynq.NewServeMux()
	mux.HandleFunc(tasks.TypeOrderActivate, handleOrderActivate(uc))
	mux.HandleFunc(tasks.TypeRecoverStuck, handleRecoverStuck(uc, log))
	return mux
}

func handleOrderActivate(uc *svc.UseCases) asynq.HandlerFunc {
	return func(ctx context.Context, t *asynq.Task) error {
		var p tasks.OrderPayload
		if err := tasks.Decode(t, &p); err != nil {
			return err
		}
		taskID, _ := asynq.GetTaskID(ctx)
		return uc.Orders.Activate(ctx, p.OrderNo, taskID)
	}
}

func handleRecoverStuck(uc *svc.UseCases, log *zap.Logger) asynq.HandlerFunc {
	return func(ctx context.Context, _ *asynq.Task) error {
		rec, err := uc.Orders.RecoverStuck(ctx)
		if err != nil {
			return fmt.Errorf("recover stuck orders: %w", err)
		}
		if rec.StuckClaims+rec.LostTasks > 0 {
			log.Info("recovery sweep re-queued orders", zap.Int("stuck_claims", rec.StuckClaims), zap.Int("lost_tasks", rec.LostTasks))
		}
		return nil
	}
}
