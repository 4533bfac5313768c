package stripe_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"orderflow/internal/infra/pay"
	fake "orderflow/internal/payfake/stripe"
)

// Each charge.dispute.* event parses into the dispute as it stands, named
// by the PaymentIntent id the payment was recorded under; a tampered one
// is refused before it is read.
func TestParseDisputeEvents(t *testing.T) {
	b := setup(t, 5*time.Second)
	ref := paidIntent(t, b, "O2001")
	parse := func(t *testing.T, n *fake.Notification, err error) *pay.DisputeUpdate {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/", nil)
		req.Header = n.Header
		ev, err := b.p.Parse(req, n.Body)
		if err != nil || ev.Dispute == nil || ev.Paid != nil || ev.Refund != nil {
			t.Fatalf("Parse = %+v, %v; want a dispute only", ev, err)
		}
		return ev.Dispute
	}
	id, created, err := b.fake.OpenDispute("O2001", "fraudulent")
	d := parse(t, created, err)
	if d.ID != id || d.TradeNo != ref || d.Status != "needs_response" || d.Reason != "fraudulent" || d.AmountCents != 5000 ||
		d.Created.IsZero() || d.EvidenceDueBy.Sub(d.Created) < fake.DisputeEvidenceWindow-time.Minute {
		t.Fatalf("created = %+v; want dispute %s on %s, needs_response, fraudulent, 5000, due a window after it opened", d, id, ref)
	}
	if n, err := b.fake.UpdateDispute(id, "under_review"); parse(t, n, err).Status != "under_review" {
		t.Error("updated: not under_review")
	}
	closed, err := b.fake.CloseDispute(id, "lost")
	if d := parse(t, closed, err); d.Status != "lost" || d.ID != id {
		t.Errorf("closed = %+v, want %s lost", d, id)
	}
	req := httptest.NewRequest(http.MethodPost, "/", nil)
	req.Header = closed.Header
	if _, err := b.p.Parse(req, append([]byte(nil), closed.Body[:len(closed.Body)-1]...)); !errors.Is(err, pay.ErrBadSignature) {
		t.Errorf("tampered dispute event: Parse = %v, want ErrBadSignature", err)
	}
}
