package order

import "context"

// ActivateTogether runs activate tasks — each an order number and a task
// ID — as one batch the batcher gathered, and returns their outcomes.
func (s *Service) ActivateTogether(ctx context.Context, tasks ...[2]string) []error {
	batch := make([]*batchTask, len(tasks))
	for i, t := range tasks {
		batch[i] = &batchTask{orderNo: t[0], taskID: t[1]}
	}
	s.activateBatch(ctx, batch)
	errs := make([]error, len(batch))
	for i, a := range batch {
		errs[i] = a.err
	}
	return errs
}
