package model_test

import (
	"errors"
	"fmt"
	"testing"

	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/google/go-cmp/cmp"
)

// A batch close locks only the orders still pending and closes them in one
// transaction, each with its own event, slot, stock and restore flow; a
// batch holding an order that is not pending any more fails whole (ErrUnmet)
// and commits nothing, and so does a second restore flow for an order.
func TestBatchCloseStatements(t *testing.T) {
	b := setup(t)
	eachCheckPath(t, b, batchCloseStatements, 100, 200)
}

func batchCloseStatements(t *testing.T, b *bundle, uid int64) {
	testenv.Exec(t, b.db, `INSERT INTO users (id, name, token_hash, pending_orders, created_at) VALUES (?, 'u', ?, 2, ?)`, uid, fmt.Sprint("h", uid), b.now)
	testenv.Exec(t, b.db, `INSERT INTO products (sku, kind, price_cents, stock, created_at) VALUES (?, 'recharge', 100, 5, ?)`, fmt.Sprint("limited-", uid), b.now)
	limited := testenv.Count(t, b.db, `SELECT MAX(id) FROM products`)

	rech, card := b.order(t, model.OrderPending), b.order(t, model.OrderPending)
	paid := b.order(t, model.OrderPaid) // paid before the close's lock
	testenv.Exec(t, b.db, `UPDATE orders SET user_id = ?, product_id = ? WHERE id = ?`, uid, limited, rech.ID)
	testenv.Exec(t, b.db, `UPDATE orders SET user_id = ?, kind = 'card', quantity = 2 WHERE id = ?`, uid, card.ID)
	for i := range 2 {
		testenv.Exec(t, b.db, `INSERT INTO card_keys (product_id, code, status, order_id, updated_at) VALUES (1, ?, 'LOCKED', ?, ?)`,
			fmt.Sprint(card.OrderNo, "-", i), card.ID, b.now)
	}
	closes := []model.OrderClose{
		{ID: rech.ID, UserID: uid, ProductID: limited, No: rech.OrderNo, Quantity: 1},
		{ID: card.ID, UserID: uid, ProductID: 1, No: card.OrderNo, Card: true, Quantity: 2},
	}

	var locked []int64
	err := b.store.InTx(b.ctx, func(tx *model.Store) (err error) {
		if locked, err = tx.LockPendingOrders(b.ctx, []int64{rech.ID, card.ID, paid.ID}); err != nil {
			return err
		}
		return tx.CloseOrdersLater(b.ctx, closes, "expired", b.now)
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{rech.ID, card.ID}, locked); diff != "" {
		t.Errorf("locked (-want +got):\n%s", diff)
	}
	for _, o := range []*model.Order{rech, card} {
		got := b.reload(t, o)
		if got.Status != model.OrderClosed || got.ClosedAt == nil {
			t.Errorf("order %s: %s (closed_at %v), want closed", o.OrderNo, got.Status, got.ClosedAt)
		}
		if diff := cmp.Diff([]string{"pending→closed (expired)"}, b.moves(t, o)); diff != "" {
			t.Errorf("order %s events (-want +got):\n%s", o.OrderNo, diff)
		}
		if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM stock_flows WHERE order_id = ? AND flow_type = ?`, o.ID, model.FlowCloseRestore); n != 1 {
			t.Errorf("order %s: %d close-restore flows, want 1", o.OrderNo, n)
		}
	}
	if got := b.reload(t, paid); got.Status != model.OrderPaid || len(b.moves(t, paid)) != 0 {
		t.Errorf("the paid order was touched: %s, events %v", got.Status, b.moves(t, paid))
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM card_keys WHERE order_id = ? AND status = 'RECYCLED'`, card.ID); n != 2 {
		t.Errorf("%d keys RECYCLED, want 2", n)
	}
	if n := testenv.Count(t, b.db, `SELECT stock FROM products WHERE id = ?`, limited); n != 6 {
		t.Errorf("limited product stock %d, want 6", n)
	}
	if n := testenv.Count(t, b.db, `SELECT pending_orders FROM users WHERE id = ?`, uid); n != 0 {
		t.Errorf("user's pending slots %d, want 0", n)
	}

	// A batch with an order that is not pending fails whole.
	other := b.order(t, model.OrderPending)
	err = b.store.InTx(b.ctx, func(tx *model.Store) error {
		return tx.CloseOrdersLater(b.ctx, []model.OrderClose{{ID: other.ID, UserID: uid, ProductID: limited, No: other.OrderNo, Quantity: 1}, closes[0]}, "expired", b.now)
	})
	if !errors.Is(err, model.ErrUnmet) {
		t.Fatalf("closing a closed order in a batch = %v, want ErrUnmet", err)
	}
	if got := b.reload(t, other); got.Status != model.OrderPending || len(b.moves(t, other)) != 0 {
		t.Errorf("the pending order of the failed batch: %s, events %v; want untouched", got.Status, b.moves(t, other))
	}
	if n := testenv.Count(t, b.db, `SELECT stock FROM products WHERE id = ?`, limited); n != 6 {
		t.Errorf("limited product stock %d after the failed batch, want 6", n)
	}

	// A restore flow already there (a ledger that would restore twice) fails the batch.
	testenv.Exec(t, b.db, `INSERT INTO stock_flows (product_id, order_id, flow_type, quantity, created_at) VALUES (?, ?, ?, 1, ?)`,
		limited, other.ID, model.FlowCloseRestore, b.now)
	err = b.store.InTx(b.ctx, func(tx *model.Store) error {
		return tx.CloseOrdersLater(b.ctx, []model.OrderClose{{ID: other.ID, UserID: uid, ProductID: limited, No: other.OrderNo, Quantity: 1}}, "expired", b.now)
	})
	if err == nil || !model.IsDuplicate(err) {
		t.Errorf("a second restore flow = %v, want a duplicate-key failure", err)
	}
	if got := b.reload(t, other); got.Status != model.OrderPending {
		t.Errorf("order %s: %s after the refused batch, want pending", other.OrderNo, got.Status)
	}
}
