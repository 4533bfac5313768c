package payment_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"orderflow/internal/domain/payment"
	"orderflow/internal/domain/refund"
	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/sign"

	"github.com/google/go-cmp/cmp"
)

// refundProvider is the simulator's provider whose refund notifications
// carry the provider's refund id, payment, amount and time, as WeChat
// Pay's and Stripe's do: a pay.RefundUpdate as JSON, signed with the
// stack's secret.
type refundProvider struct {
	pay.Provider
	secret string
}

func (p refundProvider) Parse(r *http.Request, body []byte) (*pay.Event, error) {
	if !sign.Valid(p.secret, body, r.Header.Get(sign.Header)) {
		return nil, pay.ErrBadSignature
	}
	var u pay.RefundUpdate
	if err := json.Unmarshal(body, &u); err != nil {
		return nil, err
	}
	return &pay.Event{Refund: &u}, nil
}

// refundLedger is what a refund notification may have written.
type refundLedger struct {
	Refunds, Breaks, RefundedCents int64
}

// A refund update the ledger holds no number for is a refund made at the
// provider: recorded against its payment and listed once as an
// unknown_refund break no run found, when it succeeded and names the
// provider's id, its payment and its amount; acknowledged and left alone
// when it has not succeeded or lacks its payment or amount; unusable when
// its id does not fit; and, naming no provider id, the number's answer
// (not found) as before.
func TestNotifiedRefundMadeAtTheProvider(t *testing.T) {
	t.Parallel()
	n := newNotifier(t)
	if err := n.signed(paid(n.orderNo, "T-1", 500)); err != nil {
		t.Fatalf("payment notified: %v", err)
	}
	p := refundProvider{Provider: n.p, secret: n.s.Config.PaySecret}
	look := func(t *testing.T) refundLedger {
		t.Helper()
		return refundLedger{
			Refunds:       n.s.Count(t, `SELECT COUNT(*) FROM refunds`),
			Breaks:        n.s.Count(t, `SELECT COUNT(*) FROM statement_breaks WHERE kind = 'unknown_refund' AND run_id = 0`),
			RefundedCents: n.s.Count(t, `SELECT refunded_cents FROM orders WHERE order_no = ?`, n.orderNo),
		}
	}
	at := time.Now().UTC().Truncate(time.Second)
	for _, c := range []struct {
		name    string
		update  pay.RefundUpdate
		wantErr error
		want    refundLedger
	}{
		{"processing", pay.RefundUpdate{Ref: "re_1", TradeNo: "T-1", AmountCents: 100, At: at, Status: pay.RefundProcessing}, nil, refundLedger{}},
		{"no amount", pay.RefundUpdate{Ref: "re_1", TradeNo: "T-1", At: at, Status: pay.RefundSucceeded}, nil, refundLedger{}},
		{"no payment", pay.RefundUpdate{Ref: "re_1", AmountCents: 100, At: at, Status: pay.RefundSucceeded}, nil, refundLedger{}},
		{"an id past the column", pay.RefundUpdate{Ref: strings.Repeat("r", 65), TradeNo: "T-1", AmountCents: 100, Status: pay.RefundSucceeded},
			payment.ErrUnusable, refundLedger{}},
		{"no provider id: the number's answer", pay.RefundUpdate{RefundNo: "RFnobody", TradeNo: "T-1", AmountCents: 100, Status: pay.RefundSucceeded},
			refund.ErrNotFound, refundLedger{}},
		{"a number the ledger does not hold", pay.RefundUpdate{RefundNo: "503000000001", Ref: "re_1", TradeNo: "T-1", AmountCents: 100, At: at,
			Status: pay.RefundSucceeded}, nil, refundLedger{Refunds: 1, Breaks: 1, RefundedCents: 100}},
		{"the same again", pay.RefundUpdate{RefundNo: "503000000001", Ref: "re_1", TradeNo: "T-1", AmountCents: 100, At: at,
			Status: pay.RefundSucceeded}, nil, refundLedger{Refunds: 1, Breaks: 1, RefundedCents: 100}},
		{"no number", pay.RefundUpdate{Ref: "re_2", TradeNo: "T-1", AmountCents: 50, At: at, Status: pay.RefundSucceeded},
			nil, refundLedger{Refunds: 2, Breaks: 2, RefundedCents: 150}},
	} {
		t.Run(c.name, func(t *testing.T) {
			body, _ := json.Marshal(c.update)
			r := httptest.NewRequest(http.MethodPost, "/pay/notify", strings.NewReader(string(body)))
			r.Header.Set(sign.Header, sign.Sum(n.s.Config.PaySecret, body))
			ev, err := p.Parse(r, body)
			if err == nil {
				err = n.s.UC.Payments.Notified(context.Background(), p.Name(), ev)
			}
			if (c.wantErr == nil && err != nil) || (c.wantErr != nil && !errors.Is(err, c.wantErr)) {
				t.Errorf("notified: %v, want %v", err, c.wantErr)
			}
			if diff := cmp.Diff(c.want, look(t)); diff != "" {
				t.Errorf("ledger (-want +got):\n%s", diff)
			}
		})
	}
}
