package order

import "context"

// ErrCounterNotRestored is errCounterNotRestored, for the tests outside.
var ErrCounterNotRestored = errCounterNotRestored

// CloseBatch runs one batch of close tasks for orderNos, as the closer's
// batcher does, and returns each task's outcome.
func (s *Service) CloseBatch(ctx context.Context, orderNos ...string) []error {
	batch := make([]*batchTask, len(orderNos))
	for i, no := range orderNos {
		batch[i] = &batchTask{orderNo: no}
	}
	s.closeBatch(ctx, batch)
	errs := make([]error, len(batch))
	for i, a := range batch {
		errs[i] = a.err
	}
	return errs
}
