package order

import "context"

// ErrCounterNotRestored is errCounterNotRestored, for the tests outside.
var ErrCounterNotRestored = errCounterNotRestored

// CheckManual is checkManual, for the tests outside.
var CheckManual = checkManual

// CloseBatch runs one batch of close tasks for orderNos, as the closer's
// batcher does, and returns each task's outcome.
func (s *Service) CloseBatch(ctx context.Context, orderNos ...string) []error {
	batch := make([]*batchTask, len(orderNos))
	for i, no := range orderNos {
		batch[i] = &batchTask{orderNo: no}
	}
	s.closeBatch(ctx, batch)
	return outcomes(batch)
}

// ActivateTogether runs activate tasks — each an order number and a task
// ID — as one batch the batcher gathered, and returns their outcomes.
func (s *Service) ActivateTogether(ctx context.Context, tasks ...[2]string) []error {
	batch := make([]*batchTask, len(tasks))
	for i, t := range tasks {
		batch[i] = &batchTask{orderNo: t[0], taskID: t[1]}
	}
	s.activateBatch(ctx, batch)
	return outcomes(batch)
}

func outcomes(batch []*batchTask) []error {
	errs := make([]error, len(batch))
	for i, a := range batch {
		errs[i] = a.err
	}
	return errs
}
