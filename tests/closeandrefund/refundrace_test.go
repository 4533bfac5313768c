package closeandrefund

import (
	"context"
	"testing"
	"time"

	"orderflow/internal/infra/pay"
	"orderflow/internal/testenv"
	"orderflow/model"
)

// A provider callback declares a refund failed (processing → manual,
// provider status failed) while an execute run that read the refund before
// it is about to record the provider's earlier answer, "processing". That
// stale write must not land: the operator's retry decides on the provider
// status whether the failed out_request_no may be reused, and a failed one
// must get a new generation.
func TestStaleProviderStatusCannotHideAFailedRefund(t *testing.T) {
	ctx := context.Background()
	s := testenv.Start(t, testenv.Options{NoWorker: true}) // no execute run but the one this test plays
	pid, buyers := cardShop(t, s, "refund-race", 250, 1, 1)
	buyer := buyers[0]
	o, err := mustCreate(buyer, pid, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := cancelOrder(buyer, o.OrderNo); err != nil {
		t.Fatal(err)
	}
	if _, err := payOrder(s, o.OrderNo, o.AmountCents, ""); err != nil { // after the close: refunded
		t.Fatal(err)
	}
	rs := refundsOf(t, s)
	if len(rs) != 1 || rs[0].Status != model.RefundProcessing {
		t.Fatalf("want one processing refund of the late payment, got %+v", rs)
	}
	stale := rs[0] // what the execute run read

	if err := s.UC.Refunds.Callback(ctx, stale.RefundNo, pay.RefundFailed); err != nil {
		t.Fatal(err)
	}
	// The execute run now records the provider's "processing" from before,
	// naming what it read: processing under this number.
	noted, err := s.SC.Store.NoteRefundProvider(ctx, model.ProviderNote{
		ID: stale.ID, RefundNo: stale.RefundNo, From: stale.Status, Status: pay.RefundProcessing, At: time.Now(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if noted {
		t.Errorf("a provider status written over a refund that left %s", stale.Status)
	}
	if r := refundsOf(t, s)[0]; r.Status != model.RefundManual || r.ProviderStatus != pay.RefundFailed {
		t.Errorf("after the callback and the stale write the refund is %s with provider status %q, want manual with %q",
			r.Status, r.ProviderStatus, pay.RefundFailed)
	}
	no, err := s.UC.Refunds.Retry(ctx, stale.RefundNo)
	if err != nil {
		t.Fatal(err)
	}
	if no == stale.RefundNo {
		t.Fatalf("the operator's retry reuses %s, which the provider declared failed; want a new generation", no)
	}
}
