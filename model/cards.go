package model

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// InsertCards adds UNSOLD keys to a card product. A code that already exists
// anywhere fails the whole batch (unique key), so nothing is half-added.
func (s *Store) InsertCards(ctx context.Context, productID int64, codes []string, at time.Time) error {
	return s.InTx(ctx, func(tx *Store) error {
		const batch = 500
		for i := 0; i < len(codes); i += batch {
			end := min(i+batch, len(codes))
			q := `INSERT INTO card_keys (product_id, code, status, updated_at) VALUES `
			args := make([]any, 0, 4*(end-i))
			for j, c := range codes[i:end] {
				if j > 0 {
					q += ", "
				}
				q += "(?, ?, 'UNSOLD', ?)"
				args = append(args, productID, c, at)
			}
			if _, err := tx.exec(ctx, q, args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// LockCardsLater moves qty sellable keys (UNSOLD or RECYCLED) of a product to
// LOCKED for an order. The keys are picked with FOR UPDATE SKIP LOCKED, so
// concurrent creates take different keys instead of queueing behind each
// other's row locks, and moved by a conditional UPDATE naming the statuses
// they leave. On MySQL and MariaDB the pick is a derived table of that
// UPDATE: one statement, which inside a MariaDB transaction waits for the
// next round trip (laterExpect) instead of taking one of its own. The join
// order is pinned (the pick first, then each picked key by its primary
// key): on a small table the optimizer would rather scan card_keys, and
// that scan waits on every key another create holds, which is what the
// pick skips. Fewer than qty free
// keys fail the transaction with ErrUnmet, nothing moved.
func (s *Store) LockCardsLater(ctx context.Context, productID, orderID int64, qty int, at time.Time) error {
	check := fmt.Sprintf("%d card keys of product %d for order %d", qty, productID, orderID)
	if !s.d.sqlite {
		return s.laterExpect(ctx, check, int64(qty),
			`UPDATE (SELECT id FROM card_keys WHERE product_id = ? AND status IN ('UNSOLD', 'RECYCLED') LIMIT ? FOR UPDATE SKIP LOCKED) AS pick
			STRAIGHT_JOIN card_keys FORCE INDEX (PRIMARY) ON card_keys.id = pick.id
			SET card_keys.status = 'LOCKED', card_keys.order_id = ?, card_keys.updated_at = ? WHERE card_keys.status IN ('UNSOLD', 'RECYCLED')`,
			productID, qty, orderID, at)
	}
	// SQLite has one writer at a time: nothing to skip, and no UPDATE … JOIN.
	var ids []int64
	if err := s.all(ctx, &ids, `SELECT id FROM card_keys WHERE product_id = ? AND status IN ('UNSOLD', 'RECYCLED') LIMIT ?`, productID, qty); err != nil {
		return err
	}
	if len(ids) < qty {
		return fmt.Errorf("%w: %s (%d free)", ErrUnmet, check, len(ids))
	}
	args := make([]any, 0, 2+len(ids))
	args = append(args, orderID, at)
	for _, id := range ids {
		args = append(args, id)
	}
	return s.laterExpect(ctx, check, int64(len(ids)),
		`UPDATE card_keys SET status = 'LOCKED', order_id = ?, updated_at = ? WHERE id IN (`+placeholders(len(ids))+`) AND status IN ('UNSOLD', 'RECYCLED')`,
		args...)
}

// placeholders returns "?, ?, …" for n arguments.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// SoldCodes returns the codes sold to an order.
func (s *Store) SoldCodes(ctx context.Context, orderID int64) ([]string, error) {
	var codes []string
	err := s.all(ctx, &codes, `SELECT code FROM card_keys WHERE order_id = ? AND status = 'SOLD' ORDER BY id`, orderID)
	return codes, err
}
