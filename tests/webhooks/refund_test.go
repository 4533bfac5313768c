package webhooks

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"orderflow/internal/domain/refund"
	"orderflow/internal/testenv"
	"orderflow/svc"
)

// manualEvent is one refund.manual event as the shop received it.
type manualEvent struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	Data      struct {
		RefundNo string `json:"refund_no"`
		OrderNo  string `json:"order_no"`
	} `json:"data"`
}

// A refund the provider declares failed goes to manual; the operator's
// retry gives it a new number (<base>-2), which the provider fails again.
// The second refund.manual event must name the number the admin API knows
// now — the one a shop's back office acts on — not the base number, which
// no longer finds the refund.
func TestRefundManualEventNamesTheCurrentRefundNo(t *testing.T) {
	t.Parallel()
	const secret = "test-webhook-secret"
	rcv := newReceiver(t, secret, 0, "")
	s := testenv.Start(t, testenv.Options{Configure: func(c *svc.Config) {
		c.WebhookURL, c.WebhookSecret = rcv.URL(), secret
		c.WebhookRetryDelay = svc.Duration(50 * time.Millisecond)
	}})
	ctx := t.Context()
	_, buyer, o := s.NewCardOrder(t, "wh-refund", 450, 1)
	buyer.Cancel(t, o.OrderNo)
	const trade = "TWHREFUND"
	base := refund.Number(o.OrderNo, trade)
	for _, no := range []string{base, base + "-2"} {
		if err := s.Pay.FailRefund(ctx, no); err != nil {
			t.Fatalf("arm the provider to fail %s: %v", no, err)
		}
	}
	// Paid after the close: refunded, and the provider fails the refund.
	if _, st, err := s.Pay.Pay(ctx, o.OrderNo, o.AmountCents, trade); err != nil || st != 200 {
		t.Fatalf("late payment of %s: status %d, err %v", o.OrderNo, st, err)
	}
	first := waitManualEvents(t, rcv, 1)[0]
	if first.Data.RefundNo != base || first.Data.OrderNo != o.OrderNo {
		t.Fatalf("first refund.manual names refund %s of order %s, want %s of %s", first.Data.RefundNo, first.Data.OrderNo, base, o.OrderNo)
	}
	var retried struct {
		RefundNo string `json:"refund_no"`
	}
	if st := s.Admin.Do(t, "POST", "/api/v1/admin/refunds/"+first.Data.RefundNo+"/retry", nil, &retried); st != 200 || retried.RefundNo != base+"-2" {
		t.Fatalf("retry %s: status %d, refund_no %q; want 200 and %s-2", base, st, retried.RefundNo, base)
	}

	events := waitManualEvents(t, rcv, 2)
	second := events[1]
	if second.ID == first.ID {
		t.Fatalf("the second refund.manual has the first's id %s", first.ID)
	}
	if second.Data.RefundNo != base+"-2" {
		t.Errorf("second refund.manual names refund %s, want the retry's number %s-2", second.Data.RefundNo, base)
	}
	// The shop acts on the number the event gave it.
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	if st := s.Admin.Do(t, "POST", "/api/v1/admin/refunds/"+second.Data.RefundNo+"/resolve", nil, &e); st != 200 {
		t.Errorf("resolve refund %s named by the second refund.manual: status %d %q, want 200", second.Data.RefundNo, st, e.Error.Code)
	}
	// One refund, one story: both moves to manual are in the history the
	// admin reads for it.
	if n := s.Count(t, `SELECT COUNT(*) FROM events WHERE object_type = 'refund' AND object_no = ? AND to_status = 'manual'`, base); n != 2 {
		t.Errorf("the refund's history (under %s) holds %d moves to manual, want 2", base, n)
	}
}

// waitManualEvents waits until n distinct refund.manual events were
// acknowledged and returns them oldest first.
func waitManualEvents(t *testing.T, rcv *receiver, n int) []manualEvent {
	t.Helper()
	var out []manualEvent
	testenv.Eventually(t, 30*time.Second, fmt.Sprintf("%d refund.manual events", n), func() (bool, error) {
		acked, _, _, bad := rcv.snapshot()
		if len(bad) > 0 {
			return false, fmt.Errorf("invalid delivery: %s", bad[0])
		}
		out = out[:0]
		for _, arrivals := range acked {
			if arrivals[0].Type != "refund.manual" {
				continue
			}
			var ev manualEvent
			if err := json.Unmarshal([]byte(arrivals[0].Body), &ev); err != nil {
				return false, err
			}
			out = append(out, ev)
		}
		return len(out) >= n, fmt.Errorf("%d refund.manual events acknowledged", len(out))
	})
	if len(out) != n {
		t.Fatalf("%d refund.manual events, want %d", len(out), n)
	}
	slices.SortFunc(out, func(a, b manualEvent) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out
}
