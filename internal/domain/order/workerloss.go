package order

import (
	"context"
	"fmt"

	"go.uber.org/zap"
)

// releasePage is how many of a lost worker's claims are read at a time.
const releasePage = 200

// ReleaseClaimsOf moves every order worker still holds claimed back to paid
// under a new generation and re-queues it at once — the worker's lease
// lapsed: it died, or it is frozen. Each order goes through requeue, as a
// stuck claim does, naming the token it read; a frozen worker that wakes
// finds its token gone, so its finalize fails and rolls its delivery back:
// nothing is delivered twice. It returns how many it released.
func (s *Service) ReleaseClaimsOf(ctx context.Context, worker string) (int, error) {
	released := 0
	for {
		page, err := s.store.ClaimsHeldBy(ctx, worker, releasePage)
		if err != nil {
			return released, fmt.Errorf("release claims of %s: %w", worker, err)
		}
		moved := 0
		for i := range page {
			ok, err := s.requeue(ctx, &page[i], "worker lost")
			if err != nil {
				return released, fmt.Errorf("release claims of %s: %w", worker, err)
			}
			if ok {
				moved++
				s.log.Warn("lost worker's claim released and re-queued", zap.String("order_no", page[i].OrderNo), zap.String("worker", worker))
			}
		}
		released += moved
		// A short page is the last; a page of which nothing moved (each
		// taken over meanwhile) would only be read again.
		if len(page) < releasePage || moved == 0 {
			return released, nil
		}
	}
}

// ClaimHolders lists the workers that hold claims now.
func (s *Service) ClaimHolders(ctx context.Context) ([]string, error) {
	return s.store.ClaimHolders(ctx)
}
