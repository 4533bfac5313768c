package reconcile

import (
	"context"

	"orderflow/internal/infra/tasks"
	"orderflow/model"
)

// processingRefunds: a processing refund's execute task.
func (s *Sweeper) processingRefunds(ctx context.Context, w walkAt, limit int) ([]object, error) {
	refunds, err := s.Store.RefundsPage(ctx, model.RefundProcessing, w.start, w.cur, limit)
	return objectsOf(refunds, err, func(r *model.Refund) object {
		return object{cur: model.Cursor{At: r.UpdatedAt, ID: r.ID}, taskID: tasks.ID(tasks.TypeRefundExecute, r.RefundNo, r.TaskGen),
			requeue: func(ctx context.Context) (bool, error) { return s.Refunds.RequeueExecute(ctx, r) }}
	})
}

// refundsDone: a refunding order whose refunds all succeeded has no task
// left to move it (each completion looked for the last one); it is moved
// to refunded here, by the completion's own step.
func (s *Sweeper) refundsDone(ctx context.Context, w walkAt, limit int) ([]object, error) {
	orders, err := s.Store.RefundsDonePage(ctx, w.start, w.cur, limit)
	return objectsOf(orders, err, func(o *model.Order) object {
		return object{cur: orderCursor(o), requeue: func(ctx context.Context) (bool, error) { return s.Refunds.FinishOrder(ctx, o) }}
	})
}
