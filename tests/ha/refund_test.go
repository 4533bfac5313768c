//go:build ha

package ha

import (
	"context"
	"fmt"
	"testing"
	"time"

	"orderflow/internal/domain/refund"
	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/failpoint"
	"orderflow/internal/infra/pay"
	"orderflow/internal/testenv"
	"orderflow/model"

	"go.uber.org/zap/zaptest"
)

// refundingOrder writes on s, as a fixture, an order refunding n late
// payments: one processing refund per trade.
func refundingOrder(t *testing.T, s *model.Store, n int) (*model.Order, []*model.Refund) {
	t.Helper()
	ctx := context.Background()
	o := orderMovedTo(t, s, model.OrderClosed, model.OrderRefunding)
	now := time.Now().UTC().Truncate(time.Millisecond)
	var rs []*model.Refund
	for i := range n {
		no := fmt.Sprintf("RF%s-%d", o.OrderNo, i)
		r := &model.Refund{RefundNo: no, BaseNo: no, OrderID: o.ID, OrderNo: o.OrderNo, TradeNo: fmt.Sprintf("T%s-%d", o.OrderNo, i),
			AmountCents: o.AmountCents, Reason: model.RefundReasonLate, Status: model.RefundProcessing, CreatedAt: now, UpdatedAt: now}
		if fresh, err := s.InsertRefund(ctx, r); !fresh || err != nil {
			t.Fatalf("fixture refund: %v %v", fresh, err)
		}
		if r, err := s.RefundByNo(ctx, no); err != nil {
			t.Fatal(err)
		} else {
			rs = append(rs, r)
		}
	}
	return o, rs
}

// refunds is the refund service of a process whose ledger is s.
func refunds(t *testing.T, s *model.Store) *refund.Service {
	return refund.New(refund.Deps{Store: s, Clock: clock.Real{}, Log: zaptest.NewLogger(t)}, refund.Settings{MaxAttempts: 3})
}

// Two refunds of one order succeed at once, one on node 1 and one on node
// 2. Each completion takes the order row's lock, moves its refund and counts
// the order's refunds still unfinished; the one that counts none moves the
// order refunding→refunded. Node 1's completion is held after its count (it
// saw the other refund processing) while node 2's runs whole (it sees node
// 1's refund processing: not committed yet). A lock that Galera does not
// replicate lets both commit, each having seen the other unfinished, and the
// order stays refunding for good. The lock must make the two conflict: the
// loser re-runs, counts none left and finishes the order.
func TestRefundsCompletedOnTwoNodesFinishTheOrder(t *testing.T) {
	a, b := node(t, 0), node(t, 1)
	ctx := context.Background()
	o, rs := refundingOrder(t, a, 2)
	for _, r := range rs {
		if err := waitRefund(ctx, b, r.RefundNo); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(failpoint.Reset)
	if err := failpoint.Enable(failpoint.RefundsCounted, "1*pause@"+o.OrderNo); err != nil {
		t.Fatal(err)
	}
	retries := model.TxRetries()
	first := testenv.PausedAt(t, failpoint.RefundsCounted, 30*time.Second, "node 1's completion", func() error {
		return refunds(t, a).Callback(ctx, rs[0].RefundNo, pay.RefundSucceeded)
	})
	if err := refunds(t, b).Callback(ctx, rs[1].RefundNo, pay.RefundSucceeded); err != nil {
		t.Fatalf("node 2's completion: %v", err)
	}
	failpoint.Release(failpoint.RefundsCounted)
	if err := <-first; err != nil {
		t.Fatalf("node 1's completion: %v", err)
	}
	for i, s := range []*model.Store{a, b, node(t, 2)} {
		if err := waitStatus(ctx, s, o.OrderNo, model.OrderRefunded); err != nil {
			t.Errorf("node %d: %v (both refunds succeeded)", i+1, err)
		}
	}
	// Node 1's completion lost to node 2's by certification and ran again.
	if n := model.TxRetries() - retries; n < 1 {
		t.Errorf("%d transactions re-run: the two completions never conflicted", n)
	}
	if moves := movesTo(t, a, o.OrderNo, model.OrderRefunded); moves != 1 {
		t.Errorf("%d refunding→refunded events, want 1", moves)
	}
}

// waitRefund polls s (bounded) until the refund is there.
func waitRefund(ctx context.Context, s *model.Store, refundNo string) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := s.RefundByNo(ctx, refundNo)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}
