package wechat_test

import (
	"context"
	"testing"
	"time"

	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/pay/paytest"

	"github.com/google/go-cmp/cmp"
)

// A refund made in the merchant platform, notified as REFUND.SUCCESS:
// its out_refund_no is WeChat Pay's (RefundNo, which the ledger does not
// hold), and refund_id, transaction_id, amount.refund and success_time are
// what the bill's line of it names, so the ledger can record it from the
// notification as it would from the bill.
func TestDashboardRefundNotification(t *testing.T) {
	b := setup(t, 5*time.Second)
	ctx := context.Background()
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, bjt)
	clk := setClock(b, day.Add(9*time.Hour))
	paid := paidOrder(t, b, "O-dash")
	clk.Set(day.Add(10 * time.Hour))
	ref, status, err := b.fake.DashboardRefundNotified(ctx, "O-dash", 1200)
	if err != nil || status/100 != 2 {
		t.Fatalf("dashboard refund notified: %d, %v", status, err)
	}
	ev := b.WaitEvents(t, 1)[0]
	want := pay.RefundUpdate{RefundNo: ref, Status: pay.RefundSucceeded, Ref: ref, TradeNo: paid.TradeNo, AmountCents: 1200,
		At: day.Add(10 * time.Hour)}
	if diff := cmp.Diff(&want, ev.Refund); diff != "" {
		t.Fatalf("REFUND.SUCCESS parsed (-want +got):\n%s", diff)
	}
	clk.Set(day.AddDate(0, 0, 2)) // the day's bill is published
	lines, _, err := collect(t, b, "2026-11-20")
	if err != nil {
		t.Fatal(err)
	}
	line, got := paytest.RefundLine(t, lines, ref)
	if line.RefundNo != ref {
		t.Errorf("the bill's 商户退款单号 of refund %s is %q, want the one WeChat Pay made up (its refund id)", ref, line.RefundNo)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("notification and bill line disagree (-notification +line):\n%s", diff)
	}

	n, err := b.fake.RefundNotification(ref)
	if err != nil {
		t.Fatal(err)
	}
	if status, err := n.Send(ctx); err != nil || status/100 != 2 {
		t.Fatalf("notification again: %d, %v", status, err)
	}
	if diff := cmp.Diff(&want, b.WaitEvents(t, 2)[1].Refund); diff != "" {
		t.Errorf("notification again (-want +got):\n%s", diff)
	}
}
