package reconcile_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"orderflow/internal/domain/reconcile"
	"orderflow/internal/infra/metrics"
	"orderflow/internal/testenv"
	"orderflow/model"
)

// refundingOrder writes an order left refunding with one refund in each of
// the given statuses, as if its last completion never moved the order.
func refundingOrder(t *testing.T, s *testenv.Stack, orderNo string, at time.Time, statuses ...model.RefundStatus) {
	t.Helper()
	ctx := context.Background()
	o := &model.Order{OrderNo: orderNo, UserID: 1, ProductID: 1, Kind: model.KindRecharge, Quantity: 1, AmountCents: 100,
		Status: model.OrderRefunding, CreatedAt: at, UpdatedAt: at, ExpireAt: at}
	if err := s.SC.Store.InsertOrder(ctx, o); err != nil {
		t.Fatal(err)
	}
	for i, st := range statuses {
		no := fmt.Sprintf("RF%s-%d", orderNo, i)
		r := &model.Refund{RefundNo: no, BaseNo: no, OrderID: o.ID, OrderNo: orderNo, TradeNo: no, AmountCents: 100,
			Reason: model.RefundReasonLate, Status: st, CreatedAt: at, UpdatedAt: at}
		if fresh, err := s.SC.Store.InsertRefund(ctx, r); !fresh || err != nil {
			t.Fatalf("refund %s: %v %v", no, fresh, err)
		}
	}
}

// A refunding order whose refunds all succeeded has nothing left to wait
// for, yet no task moves it: its last completion did not see itself last (two
// completions on two Galera nodes, each counting the other unfinished). The
// sweep finishes it refunding→refunded once; an order with a refund still
// processing, or handed to an operator, stays refunding.
func TestSweepFinishesRefundingOrderWhoseRefundsSucceeded(t *testing.T) {
	t.Parallel()
	s := startSweep(t, 50)
	at := s.SC.Clock.Now().Add(-time.Second)
	ok := model.RefundSucceeded
	refundingOrder(t, s, "RD000001", at, ok, ok)
	refundingOrder(t, s, "RD000002", at, ok, model.RefundProcessing)
	refundingOrder(t, s, "RD000003", at, model.RefundManual)
	// The second pass finds nothing left to finish.
	for pass, want := range []metrics.SweepKind{{Checked: 1, Requeued: 1}, {}} {
		rep := sweepPass(t, s)
		if got := rep.Kinds[reconcile.KindOrdersRefunding]; got != want {
			t.Errorf("pass %d: %s %+v, want %+v", pass+1, reconcile.KindOrdersRefunding, got, want)
		}
	}
	for no, want := range map[string]model.OrderStatus{
		"RD000001": model.OrderRefunded, "RD000002": model.OrderRefunding, "RD000003": model.OrderRefunding,
	} {
		if got := s.OrderRow(t, no).Status; got != want {
			t.Errorf("order %s is %s after the sweep, want %s", no, got, want)
		}
	}
	if n := s.MoveCount(t, "RD000001", "refunding→refunded"); n != 1 {
		t.Errorf("%d refunding→refunded moves of the finished order, want 1", n)
	}
}
