package model_test

import (
	"errors"
	"fmt"
	"testing"

	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/google/go-cmp/cmp"
)

// A batch claim moves only the orders still paid, each under its own token
// and task, with one event each; the finalize of a batch whose claim was
// lost for one order fails whole (ErrUnmet) and commits nothing; a card
// sale that finds, for any order, other than as many locked keys as it
// paid for fails whole.
func TestBatchActivationStatements(t *testing.T) {
	b := setup(t)
	eachCheckPath(t, b, batchStatements, "S", "G")
}

func batchStatements(t *testing.T, b *bundle, tag string) {
	paid := []*model.Order{b.order(t, model.OrderPaid), b.order(t, model.OrderPaid), b.order(t, model.OrderPaid)}
	gone := b.order(t, model.OrderClosed) // moved by someone else before the claim
	var claims []model.OrderClaim
	for i, o := range append(paid, gone) {
		claims = append(claims, model.OrderClaim{ID: o.ID, No: o.OrderNo, Token: fmt.Sprintf("%s-token-%d", tag, i), TaskID: fmt.Sprintf("%s-task-%d", tag, i)})
	}
	var moved []int64
	if err := b.store.InTx(b.ctx, func(tx *model.Store) (err error) {
		moved, err = tx.ClaimPaidOrders(b.ctx, claims, "worker-a", b.now)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	want := []int64{paid[0].ID, paid[1].ID, paid[2].ID}
	if diff := cmp.Diff(want, moved); diff != "" {
		t.Fatalf("claimed (-want +got):\n%s", diff)
	}
	for i, o := range paid {
		got := b.reload(t, o)
		if got.Status != model.OrderClaimed || got.ClaimToken == nil || *got.ClaimToken != claims[i].Token ||
			got.ClaimTaskID == nil || *got.ClaimTaskID != claims[i].TaskID || got.Attempts != 1 || got.ClaimedAt == nil {
			t.Errorf("order %d after the batch claim: %+v", i, got)
		}
		if diff := cmp.Diff([]string{"paid→claimed (claim)"}, b.moves(t, o)); diff != "" {
			t.Errorf("order %d events (-want +got):\n%s", i, diff)
		}
	}
	if got := b.reload(t, gone); got.Status != model.OrderClosed || got.ClaimToken != nil || len(b.moves(t, gone)) != 0 {
		t.Errorf("the closed order was touched: %+v, events %v", got, b.moves(t, gone))
	}

	// One claim lost (its token changed hands): the batch's finalize fails whole.
	testenv.Exec(t, b.db, `UPDATE orders SET claim_token = 'stolen' WHERE id = ?`, paid[2].ID)
	err := b.store.InTx(b.ctx, func(tx *model.Store) error {
		return tx.FinishClaimedOrdersLater(b.ctx, claims[:3], b.now)
	})
	if !errors.Is(err, model.ErrUnmet) {
		t.Fatalf("finalize with a lost claim = %v, want ErrUnmet", err)
	}
	for i, o := range paid {
		if got := b.reload(t, o); got.Status != model.OrderClaimed || len(b.moves(t, o)) != 1 {
			t.Errorf("order %d after the failed finalize: %s, events %v; want claimed, nothing new", i, got.Status, b.moves(t, o))
		}
	}
	// Without it, the others finish, each with its event.
	if err := b.store.InTx(b.ctx, func(tx *model.Store) error {
		return tx.FinishClaimedOrdersLater(b.ctx, claims[:2], b.now)
	}); err != nil {
		t.Fatal(err)
	}
	for i, o := range paid[:2] {
		if got := b.reload(t, o); got.Status != model.OrderFinished || got.FinishedAt == nil {
			t.Errorf("order %d: %s, want finished", i, got.Status)
		}
		if diff := cmp.Diff([]string{"paid→claimed (claim)", "claimed→finished (delivered)"}, b.moves(t, o)); diff != "" {
			t.Errorf("order %d events (-want +got):\n%s", i, diff)
		}
	}

	// Card sales: each order's locked keys, exactly; one short, all refused.
	a, c := b.order(t, model.OrderClaimed), b.order(t, model.OrderClaimed)
	for i, id := range []int64{a.ID, a.ID, c.ID} {
		testenv.Exec(t, b.db, `INSERT INTO card_keys (product_id, code, status, order_id, updated_at) VALUES (1, ?, 'LOCKED', ?, ?)`,
			fmt.Sprintf("%s-%d-%d", tag, id, i), id, b.now)
	}
	sales := []model.CardSale{{OrderID: a.ID, ProductID: 1, Quantity: 2}, {OrderID: c.ID, ProductID: 1, Quantity: 2}}
	err = b.store.InTx(b.ctx, func(tx *model.Store) error { return tx.SellCardOrdersLater(b.ctx, sales, b.now) })
	if !errors.Is(err, model.ErrUnmet) {
		t.Fatalf("sale with a key missing = %v, want ErrUnmet", err)
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM card_keys WHERE order_id IN (?, ?) AND status = 'SOLD'`, a.ID, c.ID); n != 0 {
		t.Errorf("%d keys SOLD by a refused sale", n)
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM order_effects WHERE order_id IN (?, ?)`, a.ID, c.ID); n != 0 {
		t.Errorf("%d effect rows from a refused sale", n)
	}
	// Each order's own count, not the batch's total: a's extra key does not
	// make up for c's missing one.
	sales[0].Quantity, sales[1].Quantity = 1, 2
	err = b.store.InTx(b.ctx, func(tx *model.Store) error { return tx.SellCardOrdersLater(b.ctx, sales, b.now) })
	if !errors.Is(err, model.ErrUnmet) {
		t.Fatalf("sale with a key too many and one missing = %v, want ErrUnmet", err)
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM card_keys WHERE order_id IN (?, ?) AND status = 'SOLD'`, a.ID, c.ID); n != 0 {
		t.Errorf("%d keys SOLD by a miscounted sale", n)
	}
	sales[0].Quantity, sales[1].Quantity = 2, 1
	if err := b.store.InTx(b.ctx, func(tx *model.Store) error { return tx.SellCardOrdersLater(b.ctx, sales, b.now) }); err != nil {
		t.Fatal(err)
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM card_keys WHERE order_id IN (?, ?) AND status = 'SOLD'`, a.ID, c.ID); n != 3 {
		t.Errorf("%d keys SOLD, want 3", n)
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM stock_flows WHERE order_id IN (?, ?) AND flow_type = ?`, a.ID, c.ID, model.FlowSell); n != 2 {
		t.Errorf("%d sell flows, want 2", n)
	}
	// The effect rows make it once-only: the same sale again fails whole.
	testenv.Exec(t, b.db, `UPDATE card_keys SET status = 'LOCKED' WHERE order_id IN (?, ?)`, a.ID, c.ID)
	if err := b.store.InTx(b.ctx, func(tx *model.Store) error { return tx.SellCardOrdersLater(b.ctx, sales, b.now) }); err == nil || !model.IsDuplicate(err) {
		t.Errorf("a repeated sale = %v, want a duplicate-key failure", err)
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM card_keys WHERE order_id IN (?, ?) AND status = 'SOLD'`, a.ID, c.ID); n != 0 {
		t.Errorf("%d keys SOLD by a repeated sale, want 0 (rolled back)", n)
	}
}
