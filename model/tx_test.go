package model_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/model"
)

// A MySQL transaction starts with its first statement and commits with its
// held ones; whatever ends it early — an error after statements ran, a
// panic — rolls it back and hands the connection back with no transaction
// open. The pool has one connection, so the checks after each case run on
// the very connection the transaction used.
func TestTransactionEndsCleanOnOneConnection(t *testing.T) {
	db, err := model.Open(testenv.Database(t), model.PoolConfig{MaxOpen: 1, MaxIdle: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	})
	b := &bundle{store: model.NewStore(db), db: db, ctx: context.Background(), now: time.Now().UTC().Truncate(time.Millisecond)}
	inTx := func(t *testing.T) {
		t.Helper()
		var n int
		if err := db.Raw(`SELECT @@in_transaction`).Scan(&n).Error; err != nil || n != 0 {
			t.Fatalf("@@in_transaction = %d (err %v) after the transaction, want 0", n, err)
		}
	}
	// rolledBack checks that nothing of a failed transaction on o stayed and
	// that its connection went back to the pool with no transaction open.
	rolledBack := func(t *testing.T, o *model.Order) {
		t.Helper()
		inTx(t)
		if got, _ := b.store.OrderByID(b.ctx, o.ID); got.Status != model.OrderPending {
			t.Errorf("status %s after a failed transaction, want pending", got.Status)
		}
		if n := b.count(t, `SELECT COUNT(*) FROM events WHERE object_no = ?`, o.OrderNo); n != 0 {
			t.Errorf("%d events after a failed transaction, want 0", n)
		}
	}
	move := model.OrderMove{From: model.OrderPending, To: model.OrderPaid, Reason: "tx test", At: b.now}
	event := func(no, reason string) model.Event {
		return model.Event{ObjectType: "order", ObjectNo: no, FromStatus: "x", ToStatus: "y", Reason: reason, CreatedAt: b.now}
	}

	t.Run("error after statements ran rolls back", func(t *testing.T) {
		o := b.order(t, model.OrderPending)
		boom := errors.New("boom")
		err := b.store.InTx(b.ctx, func(tx *model.Store) error {
			if err := tx.InsertEventLater(b.ctx, event(o.OrderNo, "held")); err != nil {
				return err
			}
			if moved, err := tx.MoveOrder(b.ctx, o.ID, o.OrderNo, move); err != nil || !moved {
				t.Fatalf("move: %v %v", moved, err)
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("InTx = %v, want boom", err)
		}
		rolledBack(t, o)
	})

	t.Run("panic rolls back", func(t *testing.T) {
		o := b.order(t, model.OrderPending)
		func() {
			defer func() {
				if recover() == nil {
					t.Fatal("the panic did not reach the caller")
				}
			}()
			_ = b.store.InTx(b.ctx, func(tx *model.Store) error {
				if _, err := tx.MoveOrder(b.ctx, o.ID, o.OrderNo, move); err != nil {
					return err
				}
				panic("mid-transaction")
			})
		}()
		rolledBack(t, o)
	})

	t.Run("a failing commit batch rolls back", func(t *testing.T) {
		o := b.order(t, model.OrderPending)
		pay := &model.Payment{TradeNo: "TXCOMMIT-" + o.OrderNo, OrderID: o.ID, AmountCents: 1, Disposition: model.PaymentApplied, CreatedAt: b.now}
		if _, err := b.store.InsertPayment(b.ctx, pay); err != nil {
			t.Fatal(err)
		}
		err := b.store.InTx(b.ctx, func(tx *model.Store) error {
			if _, err := tx.MoveOrder(b.ctx, o.ID, o.OrderNo, move); err != nil { // sent: starts it
				return err
			}
			if err := tx.InsertEventLater(b.ctx, event(o.OrderNo, "held before")); err != nil {
				return err
			}
			return tx.InsertPaymentLater(b.ctx, pay) // a duplicate: the commit batch fails here
		})
		if !model.IsDuplicate(err) {
			t.Fatalf("InTx = %v, want the duplicate from the commit batch", err)
		}
		rolledBack(t, o)
	})

	t.Run("held statements commit with COMMIT", func(t *testing.T) {
		o := b.order(t, model.OrderPending)
		err := b.store.InTx(b.ctx, func(tx *model.Store) error {
			if _, err := tx.OrderByID(b.ctx, o.ID); err != nil { // starts it
				return err
			}
			return tx.InsertEventLater(b.ctx, event(o.OrderNo, "only held")) // travels with COMMIT
		})
		if err != nil {
			t.Fatal(err)
		}
		inTx(t)
		if n := b.count(t, `SELECT COUNT(*) FROM events WHERE object_no = ? AND reason = 'only held'`, o.OrderNo); n != 1 {
			t.Errorf("%d held events committed, want 1", n)
		}
	})

	t.Run("the caller's deadline does not cut the commit short", func(t *testing.T) {
		// A held statement that takes 300 ms rides with the COMMIT; the
		// caller's deadline passes meanwhile. Cancelling then would close the
		// socket while the server goes on to commit: the transaction must
		// either report success or not have committed — here, it commits.
		o := b.order(t, model.OrderPending)
		ctx, cancel := context.WithTimeout(b.ctx, 100*time.Millisecond)
		defer cancel()
		err := b.store.InTx(ctx, func(tx *model.Store) error {
			if _, err := tx.OrderByID(ctx, o.ID); err != nil { // starts it
				return err
			}
			if err := model.Later(ctx, tx, `DO SLEEP(0.3)`); err != nil {
				return err
			}
			return tx.InsertEventLater(ctx, event(o.OrderNo, "after the deadline"))
		})
		committed := b.count(t, `SELECT COUNT(*) FROM events WHERE object_no = ? AND reason = 'after the deadline'`, o.OrderNo)
		if err != nil || committed != 1 {
			t.Fatalf("InTx = %v with %d events committed; want nil and 1", err, committed)
		}
		inTx(t)
	})

	t.Run("a transaction that runs nothing sends nothing", func(t *testing.T) {
		if err := b.store.InTx(b.ctx, func(*model.Store) error { return nil }); err != nil {
			t.Fatal(err)
		}
		inTx(t)
	})
}

// Outbox rows are written without reading their id back: a second row with
// a task ID already waiting is a no-op that does not fail its transaction,
// and a delete names a row by task ID and the millisecond it was written, so
// it never takes a later row that asks for the same task again.
func TestOutboxRowsByKey(t *testing.T) {
	b := setup(t)
	row := func(at time.Time) *model.OutboxRow {
		return &model.OutboxRow{TaskID: "tx-test:task", TaskType: "t", Payload: []byte("{}"), ProcessAt: at, CreatedAt: at}
	}
	first := row(b.now.Add(123456 * time.Nanosecond)) // finer than the column keeps
	for i := range 2 {
		err := b.store.InTx(b.ctx, func(tx *model.Store) error {
			if err := tx.InsertOutboxLater(b.ctx, first); err != nil {
				return err
			}
			return tx.InsertEventLater(b.ctx, model.Event{ObjectType: "order", ObjectNo: "TXOUTBOX", FromStatus: "x", ToStatus: "y", Reason: "after outbox", CreatedAt: b.now})
		})
		if err != nil {
			t.Fatalf("insert %d: %v", i+1, err)
		}
	}
	if n := b.count(t, `SELECT COUNT(*) FROM outbox WHERE task_id = 'tx-test:task'`); n != 1 {
		t.Fatalf("%d rows for one task ID, want 1", n)
	}
	if n := b.count(t, `SELECT COUNT(*) FROM events WHERE object_no = 'TXOUTBOX'`); n != 2 {
		t.Fatalf("%d events, want 2: a repeated outbox row must not fail its transaction", n)
	}
	// A later row for the same task, after the first is gone.
	if err := b.store.DeleteOutbox(b.ctx, []model.OutboxKey{first.Key()}); err != nil {
		t.Fatal(err)
	}
	if n := b.count(t, `SELECT COUNT(*) FROM outbox WHERE task_id = 'tx-test:task'`); n != 0 {
		t.Fatalf("the row is still there after its delete (key %+v)", first.Key())
	}
	second := row(b.now.Add(time.Second))
	if err := b.store.InsertOutboxLater(b.ctx, second); err != nil {
		t.Fatal(err)
	}
	if err := b.store.DeleteOutbox(b.ctx, []model.OutboxKey{first.Key()}); err != nil {
		t.Fatal(err)
	}
	if n := b.count(t, `SELECT COUNT(*) FROM outbox WHERE task_id = 'tx-test:task'`); n != 1 {
		t.Fatal("a late delete of the first row took the second one")
	}
}
