package model_test

import (
	"testing"

	"orderflow/internal/testenv"
	"orderflow/model"
)

// The batched forms answer exactly like the statements they join: a move
// that finds its order already moved writes no event; a full buyer gets no
// order.
func TestBatchedStatementsAnswerLikeSingleOnes(t *testing.T) {
	b := setup(t)
	o := b.order(t, model.OrderPending)
	move := model.OrderMove{From: model.OrderPending, To: model.OrderPaid, Reason: "payment", At: b.now}
	for i, want := range []bool{true, false} {
		var moved bool
		err := b.store.InTx(b.ctx, func(tx *model.Store) error {
			var err error
			moved, err = tx.MoveOrder(b.ctx, o.ID, o.OrderNo, move)
			return err
		})
		if err != nil || moved != want {
			t.Fatalf("move %d: moved %v err %v, want %v", i+1, moved, err, want)
		}
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM events WHERE object_no = ? AND to_status = 'paid'`, o.OrderNo); n != 1 {
		t.Errorf("paid events = %d, want 1 (the refused move wrote one)", n)
	}

	testenv.Exec(t, b.db, `INSERT INTO users (id, name, token_hash, pending_orders, created_at) VALUES (7, 'u', 'h7', 1, ?)`, b.now)
	for i, want := range []bool{true, false} {
		no := "TSLOT" + string(rune('A'+i))
		n := &model.Order{OrderNo: no, UserID: 7, ProductID: 1, Kind: model.KindCard, Quantity: 1, AmountCents: 1,
			Status: model.OrderPending, CreatedAt: b.now, UpdatedAt: b.now, ExpireAt: b.now}
		var ok bool
		err := b.store.InTx(b.ctx, func(tx *model.Store) error {
			var err error
			ok, err = tx.InsertOrderInSlot(b.ctx, n, 2)
			return err
		})
		if err != nil || ok != want || (ok && n.ID == 0) || (!ok && testenv.Count(t, b.db, `SELECT COUNT(*) FROM orders WHERE order_no = ?`, no) != 0) {
			t.Fatalf("slot %d: ok %v id %d err %v, want ok %v", i+1, ok, n.ID, err, want)
		}
	}
	if n := testenv.Count(t, b.db, `SELECT pending_orders FROM users WHERE id = 7`); n != 2 {
		t.Errorf("pending_orders = %d, want 2 (the cap)", n)
	}
}
