package model

import "context"

// ClaimsHeldBy lists up to limit orders still claimed by worker, oldest
// first: the claims a survivor releases when that worker's lease lapses.
func (s *Store) ClaimsHeldBy(ctx context.Context, worker string, limit int) ([]Order, error) {
	return rowsOf[Order](ctx, s, `SELECT * FROM orders WHERE status = ? AND claimed_by = ? ORDER BY id LIMIT ?`, OrderClaimed, worker, limit)
}

// ClaimHolders lists the workers that hold at least one claim. Claimed
// orders are few (each is being delivered), so the status index reads them.
func (s *Store) ClaimHolders(ctx context.Context) ([]string, error) {
	return rowsOf[string](ctx, s, `SELECT DISTINCT claimed_by FROM orders WHERE status = ? AND claimed_by IS NOT NULL`, OrderClaimed)
}
