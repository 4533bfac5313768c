package model_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"orderflow/model"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// afterCommitCase is one transaction and the after-commit work it must
// leave: nil want means the work must not run at all.
type afterCommitCase struct {
	name string
	// run runs the case's transaction(s) and returns the work it expects.
	run func(t *testing.T, b *bundle) (want []model.AfterCommit, err error)
	// fails says run's error is expected.
	fails bool
}

// TestAfterCommitRunsOnceAfterCommit: the work a transaction's writes
// register (outbox rows, orders whose view changed) runs exactly once after
// its COMMIT, never after a rollback, a failed commit or an unmet check, and
// a nested InTx adds to the outer transaction's work instead of running its
// own — on MariaDB (held statements, COMMIT in the batch) and SQLite.
func TestAfterCommitRunsOnceAfterCommit(t *testing.T) {
	cases := []afterCommitCase{
		{name: "a move and its task run once after the commit", run: func(t *testing.T, b *bundle) ([]model.AfterCommit, error) {
			o := b.order(t, model.OrderPending)
			row := b.row("ac:" + o.OrderNo)
			err := b.store.InTx(b.ctx, func(tx *model.Store) error {
				if err := tx.MoveOrderOrAbortLater(b.ctx, o.ID, o.OrderNo, b.paid()); err != nil {
					return err
				}
				return tx.InsertOutboxLater(b.ctx, row)
			})
			return []model.AfterCommit{{Outbox: []*model.OutboxRow{row}, Orders: []model.OrderRef{ref(o)}}}, err
		}},
		{name: "an order moved twice is dropped once", run: func(t *testing.T, b *bundle) ([]model.AfterCommit, error) {
			o := b.order(t, model.OrderPending)
			err := b.store.InTx(b.ctx, func(tx *model.Store) error {
				if _, err := tx.MoveOrder(b.ctx, o.ID, o.OrderNo, b.paid()); err != nil {
					return err
				}
				_, err := tx.MoveOrder(b.ctx, o.ID, o.OrderNo, model.OrderMove{From: model.OrderPaid, To: model.OrderClaimed, Reason: "t", At: b.now})
				return err
			})
			return []model.AfterCommit{{Orders: []model.OrderRef{ref(o)}}}, err
		}},
		{name: "a move that found the order moved drops nothing", run: func(t *testing.T, b *bundle) ([]model.AfterCommit, error) {
			o := b.order(t, model.OrderClosed)
			row := b.row("ac:" + o.OrderNo)
			err := b.store.InTx(b.ctx, func(tx *model.Store) error {
				if moved, err := tx.MoveOrder(b.ctx, o.ID, o.OrderNo, b.paid()); err != nil || moved {
					return errors.Join(err, errors.New("moved a closed order"))
				}
				return tx.InsertOutboxLater(b.ctx, row)
			})
			return []model.AfterCommit{{Outbox: []*model.OutboxRow{row}}}, err
		}},
		{name: "a refund opened and moved drops its order's view", run: func(t *testing.T, b *bundle) ([]model.AfterCommit, error) {
			o := b.order(t, model.OrderRefunding)
			r := &model.Refund{RefundNo: "RF" + o.OrderNo, BaseNo: "RF" + o.OrderNo, OrderID: o.ID, OrderNo: o.OrderNo, TradeNo: "T" + o.OrderNo,
				AmountCents: 100, Reason: model.RefundReasonLate, Status: model.RefundProcessing, CreatedAt: b.now, UpdatedAt: b.now}
			err := b.store.InTx(b.ctx, func(tx *model.Store) error {
				_, err := tx.InsertRefund(b.ctx, r)
				return err
			})
			if err != nil {
				return nil, err
			}
			r, err = b.store.RefundByNo(b.ctx, r.RefundNo)
			if err != nil {
				return nil, err
			}
			err = b.store.InTx(b.ctx, func(tx *model.Store) error {
				_, err := tx.MoveRefund(b.ctx, r, model.RefundMove{From: model.RefundProcessing, To: model.RefundManual, Reason: "t", At: b.now})
				return err
			})
			return []model.AfterCommit{{Orders: []model.OrderRef{ref(o)}}, {Orders: []model.OrderRef{ref(o)}}}, err
		}},
		{name: "a nested InTx adds to the outer transaction's work", run: func(t *testing.T, b *bundle) ([]model.AfterCommit, error) {
			o := b.order(t, model.OrderPending)
			outer, inner := b.row("ac-outer:"+o.OrderNo), b.row("ac-inner:"+o.OrderNo)
			err := b.store.InTx(b.ctx, func(tx *model.Store) error {
				if err := tx.InsertOutboxLater(b.ctx, outer); err != nil {
					return err
				}
				return tx.InTx(b.ctx, func(tx *model.Store) error {
					if err := tx.InsertOutboxLater(b.ctx, inner); err != nil {
						return err
					}
					return tx.MoveOrderOrAbortLater(b.ctx, o.ID, o.OrderNo, b.paid())
				})
			})
			return []model.AfterCommit{{Outbox: []*model.OutboxRow{outer, inner}, Orders: []model.OrderRef{ref(o)}}}, err
		}},
		{name: "a rollback runs nothing", fails: true, run: func(t *testing.T, b *bundle) ([]model.AfterCommit, error) {
			o := b.order(t, model.OrderPending)
			err := b.store.InTx(b.ctx, func(tx *model.Store) error {
				if err := tx.MoveOrderOrAbortLater(b.ctx, o.ID, o.OrderNo, b.paid()); err != nil {
					return err
				}
				if err := tx.InsertOutboxLater(b.ctx, b.row("ac:"+o.OrderNo)); err != nil {
					return err
				}
				return errors.New("the caller changed its mind")
			})
			return nil, err
		}},
		{name: "an unmet check runs nothing", fails: true, run: func(t *testing.T, b *bundle) ([]model.AfterCommit, error) {
			o := b.order(t, model.OrderClosed)
			err := b.store.InTx(b.ctx, func(tx *model.Store) error {
				if err := tx.InsertOutboxLater(b.ctx, b.row("ac:"+o.OrderNo)); err != nil {
					return err
				}
				return tx.MoveOrderOrAbortLater(b.ctx, o.ID, o.OrderNo, b.paid())
			})
			return nil, err
		}},
		{name: "a failed commit runs nothing", fails: true, run: func(t *testing.T, b *bundle) ([]model.AfterCommit, error) {
			o := b.order(t, model.OrderPending)
			pay := &model.Payment{TradeNo: "AC-" + o.OrderNo, OrderID: o.ID, AmountCents: 100, Disposition: model.PaymentApplied, CreatedAt: b.now}
			if _, err := b.store.InsertPayment(b.ctx, pay); err != nil {
				return nil, err
			}
			// On MariaDB the duplicate payment travels with the COMMIT and
			// fails it there, after the move and the row were registered.
			err := b.store.InTx(b.ctx, func(tx *model.Store) error {
				if err := tx.MoveOrderOrAbortLater(b.ctx, o.ID, o.OrderNo, b.paid()); err != nil {
					return err
				}
				if err := tx.InsertOutboxLater(b.ctx, b.row("ac:"+o.OrderNo)); err != nil {
					return err
				}
				return tx.InsertPaymentLater(b.ctx, pay)
			})
			return nil, err
		}},
		{name: "a transaction that wrote nothing runs nothing", run: func(t *testing.T, b *bundle) ([]model.AfterCommit, error) {
			o := b.order(t, model.OrderPending)
			return nil, b.store.InTx(b.ctx, func(tx *model.Store) error {
				_, err := tx.OrderByID(b.ctx, o.ID)
				return err
			})
		}},
		{name: "outside a transaction a write's work runs at once", run: func(t *testing.T, b *bundle) ([]model.AfterCommit, error) {
			o := b.order(t, model.OrderPending)
			row := b.row("ac:" + o.OrderNo)
			return []model.AfterCommit{{Outbox: []*model.OutboxRow{row}}}, b.store.InsertOutboxLater(b.ctx, row)
		}},
	}
	for name, b := range stores(t) {
		if b.now.IsZero() {
			b.now = time.Now().UTC().Truncate(time.Millisecond)
		}
		for _, tc := range cases {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				var got []model.AfterCommit
				b.store.SetAfterCommit(func(_ context.Context, w model.AfterCommit) { got = append(got, w) })
				want, err := tc.run(t, b)
				if (err != nil) != tc.fails {
					t.Fatalf("transaction error = %v, want failure %v", err, tc.fails)
				}
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("after-commit work (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestUnmetNamesTheCheck: a transaction failed by an unmet check says which
// check, whichever side checked it, and stays ErrUnmet.
func TestUnmetNamesTheCheck(t *testing.T) {
	all := stores(t)
	backends := map[string]*bundle{
		"mariadb (checked by the server)": all["mariadb"],
		"mariadb (checked in Go)":         {store: model.CheckedInGo(all["mariadb"].store), db: all["mariadb"].db, ctx: context.Background(), now: all["mariadb"].now},
		"sqlite":                          all["sqlite"],
	}
	for name, b := range backends {
		if b.now.IsZero() {
			b.now = time.Now().UTC().Truncate(time.Millisecond)
		}
		for _, tc := range []struct {
			name   string
			status model.OrderStatus
			move   model.OrderMove
			want   string // the check's name, after the order number
		}{
			{"status", model.OrderClosed, b.paid(), "pending→paid"},
			{"claim token", model.OrderClaimed,
				model.OrderMove{From: model.OrderClaimed, To: model.OrderFinished, Reason: "t", At: b.now, Token: "not-the-holder"},
				"claimed→finished (claim token)"},
			{"generation", model.OrderPending,
				model.OrderMove{From: model.OrderPending, To: model.OrderPaid, Reason: "t", At: b.now, NextGen: 3},
				"pending→paid (activate gen 2)"},
		} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				o := b.order(t, tc.status)
				err := b.store.InTx(b.ctx, func(tx *model.Store) error {
					return tx.MoveOrderOrAbortLater(b.ctx, o.ID, o.OrderNo, tc.move)
				})
				if !errors.Is(err, model.ErrUnmet) {
					t.Fatalf("InTx = %v, want ErrUnmet", err)
				}
				if want := "order " + o.OrderNo + " " + tc.want; !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name the check %q", err, want)
				}
			})
		}
	}
}

// paid is the pending→paid move the cases use.
func (b *bundle) paid() model.OrderMove {
	return model.OrderMove{From: model.OrderPending, To: model.OrderPaid, Reason: "after-commit test", At: b.now}
}

// row is an outbox row of a made-up task.
func (b *bundle) row(taskID string) *model.OutboxRow {
	return model.TaskRow(taskID, "test:task", []byte("{}"), b.now, b.now)
}

func ref(o *model.Order) model.OrderRef { return model.OrderRef{ID: o.ID, No: o.OrderNo} }
