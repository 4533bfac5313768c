package model_test

import (
	"errors"
	"fmt"
	"testing"

	"orderflow/internal/testenv"
	"orderflow/model"
)

// A statement sent with an expectation fails its whole transaction when the
// expectation is unmet — on MariaDB the check travels held, with the COMMIT —
// and nothing the transaction wrote stays: neither what was held before the
// check nor what was held after it.
func TestUnmetExpectationRollsBackTheTransaction(t *testing.T) {
	b := setup(t)
	if !model.ServerChecks(b.store) {
		t.Fatal("the test server is MariaDB: its checks should travel with the statements")
	}
	eachCheckPath(t, b, unmetRollsBack, 77, 78)
}

func unmetRollsBack(t *testing.T, b *bundle, product int64) {
	moved := b.order(t, model.OrderPaid) // someone else moved it already
	move := model.OrderMove{From: model.OrderPending, To: model.OrderPaid, Reason: "unmet test", At: b.now}
	err := b.store.InTx(b.ctx, func(tx *model.Store) error {
		if err := tx.InsertEventLater(b.ctx, model.Event{ObjectType: "order", ObjectNo: moved.OrderNo, FromStatus: "x", ToStatus: "y", Reason: "before", CreatedAt: b.now}); err != nil {
			return err
		}
		if err := tx.MoveOrderOrAbortLater(b.ctx, moved.ID, moved.OrderNo, move); err != nil {
			return err
		}
		return tx.InsertOutboxLater(b.ctx, &model.OutboxRow{TaskID: "unmet:" + moved.OrderNo, TaskType: "t", Payload: []byte("{}"), ProcessAt: b.now, CreatedAt: b.now})
	})
	if !errors.Is(err, model.ErrUnmet) {
		t.Fatalf("InTx = %v, want ErrUnmet", err)
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM events WHERE object_no = ?`, moved.OrderNo); n != 0 {
		t.Errorf("%d events committed by a failed transaction, want 0", n)
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM outbox WHERE task_id = ?`, "unmet:"+moved.OrderNo); n != 0 {
		t.Errorf("the outbox row after the check committed")
	}

	// The same move on a pending order commits, with its event.
	o := b.order(t, model.OrderPending)
	if err := b.store.InTx(b.ctx, func(tx *model.Store) error {
		return tx.MoveOrderOrAbortLater(b.ctx, o.ID, o.OrderNo, move)
	}); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.store.OrderByID(b.ctx, o.ID); got.Status != model.OrderPaid {
		t.Errorf("status %s, want paid", got.Status)
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM events WHERE object_no = ? AND reason = 'unmet test'`, o.OrderNo); n != 1 {
		t.Errorf("%d move events, want 1", n)
	}

	// A payment recorded twice: the second transaction fails with a
	// duplicate key, whatever else it held.
	pay := &model.Payment{TradeNo: "UNMET-" + o.OrderNo, OrderID: o.ID, AmountCents: 100, Disposition: model.PaymentApplied, CreatedAt: b.now}
	for i, wantDup := range []bool{false, true} {
		err := b.store.InTx(b.ctx, func(tx *model.Store) error {
			if err := tx.InsertPaymentLater(b.ctx, pay); err != nil {
				return err
			}
			return tx.InsertEventLater(b.ctx, model.Event{ObjectType: "order", ObjectNo: o.OrderNo, FromStatus: "x", ToStatus: "y", Reason: "with payment", CreatedAt: b.now})
		})
		if model.IsDuplicate(err) != wantDup || (!wantDup && err != nil) {
			t.Fatalf("record %d: %v, want duplicate %v", i+1, err, wantDup)
		}
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM events WHERE object_no = ? AND reason = 'with payment'`, o.OrderNo); n != 1 {
		t.Errorf("%d events with the payment, want 1 (the duplicate's rolled back)", n)
	}

	// Fewer free keys than asked: nothing is locked.
	testenv.Exec(t, b.db, `INSERT INTO card_keys (product_id, code, status, updated_at) VALUES (?, ?, 'UNSOLD', ?)`, product, fmt.Sprintf("UNMET-K-%d", product), b.now)
	if err := b.store.InTx(b.ctx, func(tx *model.Store) error {
		return tx.LockCardsLater(b.ctx, product, o.ID, 2, b.now)
	}); !errors.Is(err, model.ErrUnmet) {
		t.Fatalf("LockCardsLater(2 of 1 free) = %v; want ErrUnmet", err)
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM card_keys WHERE product_id = ? AND status = 'UNSOLD'`, product); n != 1 {
		t.Errorf("the one free key moved although the order could not get two")
	}
	if err := b.store.InTx(b.ctx, func(tx *model.Store) error {
		return tx.LockCardsLater(b.ctx, product, o.ID, 1, b.now)
	}); err != nil {
		t.Fatalf("LockCardsLater(1 of 1 free) = %v; want nil", err)
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM card_keys WHERE product_id = ? AND status = 'LOCKED' AND order_id = ?`, product, o.ID); n != 1 {
		t.Errorf("the key is not LOCKED to the order")
	}
}
