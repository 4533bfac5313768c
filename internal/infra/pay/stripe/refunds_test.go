package stripe_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/pay/paytest"

	"github.com/google/go-cmp/cmp"
)

// A refund made in the Dashboard arrives as refund.created with no
// metadata: no orderflow refund number, and the id, payment, amount and
// time its statement line names, so the ledger can record it from the
// webhook as it would from the statement.
func TestDashboardRefundWebhook(t *testing.T) {
	b, c, day, d0 := statementSetup(t)
	ctx := context.Background()
	pi := payAt(t, b, c, "D1", d0.Add(9*time.Hour))
	c.set(d0.Add(10 * time.Hour))
	ref, status, err := b.fake.DashboardRefundNotified(ctx, "D1", 1200)
	if err != nil || status != http.StatusOK {
		t.Fatalf("dashboard refund notified: %d, %v", status, err)
	}
	ev := b.WaitEvents(t, 1)[0]
	want := pay.RefundUpdate{Status: pay.RefundSucceeded, Ref: ref, TradeNo: pi, AmountCents: 1200, At: d0.Add(10 * time.Hour)}
	if diff := cmp.Diff(&want, ev.Refund); diff != "" {
		t.Fatalf("refund.created parsed (-want +got):\n%s", diff)
	}
	lines, _ := readStatement(t, b.p, day)
	_, got := paytest.RefundLine(t, lines, ref)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("webhook and statement line disagree (-webhook +line):\n%s", diff)
	}

	// The same webhook again parses the same (the ledger's record is keyed
	// by the id, so a repeat records nothing more).
	n, err := b.fake.RefundNotification(ref)
	if err != nil {
		t.Fatal(err)
	}
	if status, err := n.Send(ctx); err != nil || status != http.StatusOK {
		t.Fatalf("webhook again: %d, %v", status, err)
	}
	if diff := cmp.Diff(&want, b.WaitEvents(t, 2)[1].Refund); diff != "" {
		t.Errorf("webhook again (-want +got):\n%s", diff)
	}
}
