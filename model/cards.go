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
// LOCKED for an order. It picks keys with FOR UPDATE SKIP LOCKED, so
// concurrent creates take different keys instead of queueing behind each
// other's row locks, and reports false, changing nothing, when fewer than qty
// are free. The picked keys then move with a conditional UPDATE naming the
// statuses they leave, which must move them all or the transaction fails
// with ErrUnmet; inside a MariaDB transaction it waits for the next round
// trip (laterExpect).
func (s *Store) LockCardsLater(ctx context.Context, productID, orderID int64, qty int, at time.Time) (bool, error) {
	var ids []int64
	if err := s.all(ctx, &ids,
		`SELECT id FROM card_keys WHERE product_id = ? AND status IN ('UNSOLD', 'RECYCLED') LIMIT ? FOR UPDATE SKIP LOCKED`,
		productID, qty); err != nil {
		return false, err
	}
	if len(ids) < qty {
		return false, nil
	}
	args := make([]any, 0, 2+len(ids))
	args = append(args, orderID, at)
	for _, id := range ids {
		args = append(args, id)
	}
	return true, s.laterExpect(ctx, fmt.Sprintf("%d card keys of product %d for order %d", len(ids), productID, orderID), int64(len(ids)),
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
