package model

import "context"

// ClaimsHeldBy lists up to limit orders still claimed by worker, oldest
// first: the claims a survivor releases when that worker's lease lapses.
func (s *Store) ClaimsHeldBy(ctx context.Context, worker string, limit int) ([]Order, error) {
	var out []Order
	err := s.all(ctx, &out, `SELECT * FROM orders WHERE status = ? AND claimed_by = ? ORDER BY id LIMIT ?`, OrderClaimed, worker, limit)
	return out, err
}

// ClaimHolders lists the workers that hold at least one claim. Claimed
// orders are few (each is being delivered), so the status index reads them.
func (s *Store) ClaimHolders(ctx context.Context) ([]string, error) {
	var out []string
	err := s.all(ctx, &out, `SELECT DISTINCT claimed_by FROM orders WHERE status = ? AND claimed_by IS NOT NULL`, OrderClaimed)
	return out, err
}
