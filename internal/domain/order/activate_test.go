package order_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/domain/catalog"
	"orderflow/internal/domain/order"
	"orderflow/internal/infra/failpoint"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"
)

// A task on its own (ActivateBatch 1: no batcher) runs the batch code as a
// batch of one, and every case the task can meet is handled there: a claim
// of its own taken over, the attempt cap, a claim lost before the finalize
// (or the order finished by its new holder), a card order short of a key;
// a batch with a second task for one order runs it after the first.
func TestActivateRunsTheBatchCodeForOne(t *testing.T) {
	t.Parallel()
	s := testenv.Start(t, testenv.Options{NoWorker: true, Configure: func(c *svc.Config) { c.ActivateBatch = 1 }})
	ctx := context.Background()
	uc := s.UC
	recharge, err := uc.Catalog.CreateProduct(ctx, catalog.NewProduct{SKU: "act-credit", Kind: "recharge", PriceCents: 300, CreditCents: 300})
	if err != nil {
		t.Fatal(err)
	}
	card, err := uc.Catalog.CreateProduct(ctx, catalog.NewProduct{SKU: "act-card", Kind: "card", PriceCents: 100})
	if err != nil {
		t.Fatal(err)
	}
	s.AddCards(t, card, "ACT", 8)
	buyer, err := uc.Accounts.Create(ctx, "buyer", 0)
	if err != nil {
		t.Fatal(err)
	}
	paidOrder := func(t *testing.T, productID int64, qty int) string {
		t.Helper()
		res, err := uc.Orders.Create(ctx, order.CreateRequest{UserID: buyer.ID, ProductID: productID, Quantity: qty})
		if err != nil {
			t.Fatal(err)
		}
		no := res.Order.OrderNo
		if _, err := uc.Orders.Pay(ctx, order.Payment{OrderNo: no, TradeNo: "T-" + no, AmountCents: res.Order.AmountCents}); err != nil {
			t.Fatal(err)
		}
		return no
	}
	// claimedBy leaves an order claimed by a task whose lease expired.
	claimedBy := func(t *testing.T, no, taskID string) {
		testenv.Exec(t, s.SC.DB, `UPDATE orders SET status = ?, claim_token = 'old', claim_task_id = ?, claimed_by = 'gone', claimed_at = ?, attempts = 1
			WHERE order_no = ?`, model.OrderClaimed, taskID, time.Now(), no)
	}
	effects := func(t *testing.T, no string) int64 {
		return s.Count(t, `SELECT COUNT(*) FROM order_effects WHERE order_id = ?`, s.OrderRow(t, no).ID)
	}

	t.Run("a paid order is claimed and finished", func(t *testing.T) {
		no := paidOrder(t, recharge, 1)
		if err := uc.Orders.Activate(ctx, no, "task-1"); err != nil {
			t.Fatal(err)
		}
		if o := s.CheckFinishedOnce(t, no); o.Attempts != 1 {
			t.Errorf("attempts %d, want 1", o.Attempts)
		}
	})
	t.Run("its own claim is taken over, another task's is not", func(t *testing.T) {
		no := paidOrder(t, recharge, 1)
		claimedBy(t, no, "task-own")
		if err := uc.Orders.Activate(ctx, no, "task-other"); err != nil {
			t.Fatal(err)
		}
		if o := s.OrderRow(t, no); o.Status != model.OrderClaimed || *o.ClaimToken != "old" {
			t.Fatalf("another task's claim: %s token %s, want claimed, untouched", o.Status, *o.ClaimToken)
		}
		if err := uc.Orders.Activate(ctx, no, "task-own"); err != nil {
			t.Fatal(err)
		}
		if o := s.CheckFinishedOnce(t, no); o.Attempts != 2 || *o.ClaimToken == "old" {
			t.Errorf("after the takeover: attempts %d token %s, want 2 and a new token", o.Attempts, *o.ClaimToken)
		}
	})
	t.Run("at the attempt cap the order fails", func(t *testing.T) {
		no := paidOrder(t, recharge, 1)
		testenv.Exec(t, s.SC.DB, `UPDATE orders SET attempts = ? WHERE order_no = ?`, s.Config.MaxAttempts, no)
		if err := uc.Orders.Activate(ctx, no, "task-1"); err != nil {
			t.Fatalf("Activate = %v, want nil (the order is failed, nothing to retry)", err)
		}
		if o := s.OrderRow(t, no); o.Status != model.OrderFailed || effects(t, no) != 0 {
			t.Errorf("order %s with %d effects, want failed, none", o.Status, effects(t, no))
		}
	})
	// lostWhileDelivering holds no's delivery at its start while steal takes
	// the claim away, and returns Activate's outcome.
	lostWhileDelivering := func(t *testing.T, no string, steal func()) error {
		t.Helper()
		if err := failpoint.Enable(failpoint.ActivateDeliver, "pause@"+no); err != nil {
			t.Fatal(err)
		}
		defer failpoint.Disable(failpoint.ActivateDeliver)
		done := make(chan error, 1)
		go func() { done <- uc.Orders.Activate(ctx, no, "task-1") }()
		select {
		case <-failpoint.Reached(failpoint.ActivateDeliver):
		case <-time.After(10 * time.Second):
			t.Fatal("the delivery never reached its failpoint")
		}
		steal()
		failpoint.Release(failpoint.ActivateDeliver)
		return <-done
	}
	t.Run("a card order its claim's new holder finished first: nothing to do", func(t *testing.T) {
		no := paidOrder(t, card, 1)
		err := lostWhileDelivering(t, no, func() {
			o := s.OrderRow(t, no)
			testenv.Exec(t, s.SC.DB, `INSERT INTO order_effects (order_id, effect, detail, created_at) VALUES (?, 'card', '', ?)`, o.ID, time.Now())
			testenv.Exec(t, s.SC.DB, `UPDATE orders SET status = ?, claim_token = 'stolen' WHERE id = ?`, model.OrderFinished, o.ID)
		})
		if err != nil {
			t.Fatalf("Activate = %v, want nil (the claim was lost)", err)
		}
		if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE order_id = ? AND status = 'SOLD'`, s.OrderRow(t, no).ID); n != 0 {
			t.Errorf("%d keys sold by the worker that lost its claim", n)
		}
	})
	t.Run("a claim lost before the finalize commits nothing", func(t *testing.T) {
		no := paidOrder(t, recharge, 1)
		if err := lostWhileDelivering(t, no, func() {
			testenv.Exec(t, s.SC.DB, `UPDATE orders SET claim_token = 'stolen' WHERE order_no = ?`, no)
		}); err != nil {
			t.Fatalf("Activate = %v, want nil (the claim's new holder finishes it)", err)
		}
		if o := s.OrderRow(t, no); o.Status != model.OrderClaimed || *o.ClaimToken != "stolen" || effects(t, no) != 0 {
			t.Errorf("order %s token %s with %d effects, want claimed by the thief, none", o.Status, *o.ClaimToken, effects(t, no))
		}
	})
	t.Run("a card order short of a key is a failed attempt, not a lost claim", func(t *testing.T) {
		no := paidOrder(t, card, 2)
		o := s.OrderRow(t, no)
		testenv.Exec(t, s.SC.DB, `UPDATE card_keys SET status = 'UNSOLD', order_id = NULL WHERE order_id = ? ORDER BY id LIMIT 1`, o.ID)
		err := uc.Orders.Activate(ctx, no, "task-1")
		if err == nil || apperr.IsFinal(err) || !errors.Is(err, model.ErrUnmet) {
			t.Fatalf("Activate = %v, want a retryable unmet check", err)
		}
		if o := s.OrderRow(t, no); o.Status != model.OrderPaid || o.Attempts != 1 || effects(t, no) != 0 {
			t.Errorf("order %s after %d attempts with %d effects, want released to paid, none", o.Status, o.Attempts, effects(t, no))
		}
		if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE order_id = ? AND status = 'SOLD'`, o.ID); n != 0 {
			t.Errorf("%d keys sold", n)
		}
	})
	t.Run("a second task for an order in one batch runs after the first", func(t *testing.T) {
		twice, other, cards := paidOrder(t, recharge, 1), paidOrder(t, recharge, 1), paidOrder(t, card, 2)
		claimedBy(t, twice, "task-own")
		errs := uc.Orders.ActivateTogether(ctx, [2]string{twice, "task-other"}, [2]string{other, "task-2"},
			[2]string{twice, "task-own"}, [2]string{cards, "task-3"}, [2]string{"O-none", "task-4"})
		for i, err := range errs[:4] {
			if err != nil {
				t.Errorf("task %d: %v", i, err)
			}
		}
		if !errors.Is(errs[4], order.ErrNotFound) {
			t.Errorf("task for an unknown order = %v, want ErrNotFound", errs[4])
		}
		for _, no := range []string{twice, other, cards} {
			s.CheckFinishedOnce(t, no)
		}
		if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE order_id = ? AND status = 'SOLD'`, s.OrderRow(t, cards).ID); n != 2 {
			t.Errorf("%d keys sold to the card order, want 2", n)
		}
	})
}
