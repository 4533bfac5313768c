package model_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/model"
)

// Two creates of one product take different keys at once: the second
// skips the key the first holds (its transaction still open) instead of
// waiting for it. The pick is a derived table of LockCardsLater's UPDATE,
// where a locking clause's meaning is the server's to keep.
func TestLockCardsSkipsAKeyAnotherCreateHolds(t *testing.T) {
	b := setup(t)
	eachCheckPath(t, b, lockCardsSkips, 91, 92)
}

func lockCardsSkips(t *testing.T, b *bundle, product int64) {
	for _, code := range []string{"A", "B"} {
		testenv.Exec(t, b.db, `INSERT INTO card_keys (product_id, code, status, updated_at) VALUES (?, ?, 'UNSOLD', ?)`, product, fmt.Sprint("SKIP-", product, code), b.now)
	}
	first, second := b.order(t, model.OrderPending), b.order(t, model.OrderPending)
	var took time.Duration
	var secondErr error
	err := b.store.InTx(b.ctx, func(tx *model.Store) error {
		if err := tx.LockCardsLater(b.ctx, product, first.ID, 1, b.now); err != nil {
			return err
		}
		// A read sends the held UPDATE: the first create now holds its key.
		if _, err := tx.OrderByID(b.ctx, first.ID); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		defer cancel()
		start := time.Now()
		secondErr = b.store.InTx(ctx, func(tx2 *model.Store) error {
			return tx2.LockCardsLater(ctx, product, second.ID, 1, b.now)
		})
		took = time.Since(start)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if secondErr != nil || took > 2*time.Second {
		t.Fatalf("second create: %v after %s; want the other key at once", secondErr, took)
	}
	holders := map[int64]int64{}
	for _, o := range []*model.Order{first, second} {
		holders[o.ID] = testenv.Count(t, b.db, `SELECT COUNT(*) FROM card_keys WHERE product_id = ? AND status = 'LOCKED' AND order_id = ?`, product, o.ID)
	}
	if holders[first.ID] != 1 || holders[second.ID] != 1 {
		t.Errorf("keys LOCKED per order %v, want one each", holders)
	}
}
