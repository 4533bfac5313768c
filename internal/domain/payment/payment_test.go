package payment_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"orderflow/internal/domain/bounds"
	"orderflow/internal/domain/payment"
	"orderflow/internal/domain/refund"
	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/sign"
	"orderflow/internal/testenv"

	"github.com/google/go-cmp/cmp"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// notifier is one test's notifications on a real ledger, with the
// simulator's provider (bodies signed with the stack's secret) and a
// pending order of 500 cents.
type notifier struct {
	s       *testenv.Stack
	p       pay.Provider
	orderNo string
}

func newNotifier(t *testing.T) *notifier {
	t.Helper()
	s := testenv.Start(t, testenv.Options{NoWorker: true}) // nothing activates or closes behind the test
	orderNo := s.NewShop(t, "notified", 500).Order(t)
	p, ok := s.UC.Pay.Get(pay.NamePaysim)
	if !ok {
		t.Fatal("the simulator's provider is not enabled")
	}
	return &notifier{s: s, p: p, orderNo: orderNo}
}

// notify hands body, signed with signature, to Notified as the endpoint does.
func (n *notifier) notify(body []byte, signature string) error {
	r := httptest.NewRequest(http.MethodPost, "/pay/notify", strings.NewReader(string(body)))
	r.Header.Set(sign.Header, signature)
	ev, err := n.p.Parse(r, body)
	if err != nil {
		return err
	}
	return n.s.UC.Payments.Notified(context.Background(), n.p.Name(), ev)
}

func (n *notifier) signed(body []byte) error {
	return n.notify(body, sign.Sum(n.s.Config.PaySecret, body))
}

// ledger is what a notification may have written.
type ledger struct {
	Payments, Held, Refunds int64
	Status                  string
}

func (n *notifier) ledger(t *testing.T) ledger {
	t.Helper()
	return ledger{
		Payments: n.s.Count(t, `SELECT COUNT(*) FROM payments`),
		Held:     n.s.Count(t, `SELECT COUNT(*) FROM held_payments`),
		Refunds:  n.s.Count(t, `SELECT COUNT(*) FROM refunds`),
		Status:   n.s.OrderRow(t, n.orderNo).Status.String(),
	}
}

func paid(orderNo, tradeNo string, cents int64) []byte {
	b, _ := json.Marshal(map[string]any{"order_no": orderNo, "trade_no": tradeNo, "amount_cents": cents})
	return b
}

var untouched = ledger{Status: "pending"}

// refused checks a notification was refused with want and wrote nothing.
func (n *notifier) refused(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("notified: %v, want %v", err, want)
	}
	if diff := cmp.Diff(untouched, n.ledger(t)); diff != "" {
		t.Errorf("ledger (-want +got):\n%s", diff)
	}
}

// A notification whose signature does not verify is refused before
// anything in it is read (a body that is not even JSON says so by its
// signature, not its syntax), and nothing is written.
func TestNotifiedRefusesABadSignature(t *testing.T) {
	t.Parallel()
	n := newNotifier(t)
	good := paid(n.orderNo, "T-1", 500)
	for _, c := range []struct {
		name, signature string
		body            []byte
	}{
		{"no signature", "", good},
		{"another body's signature", sign.Sum(n.s.Config.PaySecret, paid(n.orderNo, "T-1", 1)), good},
		{"another secret's signature", sign.Sum("not-the-secret", good), good},
		{"not JSON, unsigned", "deadbeef", []byte("{not json")},
	} {
		t.Run(c.name, func(t *testing.T) {
			n.refused(t, n.notify(c.body, c.signature), pay.ErrBadSignature)
		})
	}
}

// A verified payment orderflow cannot record (no trade, a trade past the
// column, an amount outside 1..MaxCents) is ErrUnusable — the provider
// sends it again — and writes nothing: no payment, no held payment, no
// refund of money that cannot be named.
func TestNotifiedRefusesAnUnusablePayment(t *testing.T) {
	t.Parallel()
	n := newNotifier(t)
	for _, c := range []struct {
		name  string
		trade string
		cents int64
	}{
		{"no trade", "", 500},
		{"a trade of 65 characters", strings.Repeat("t", 65), 500},
		{"no amount", "T-1", 0},
		{"a negative amount", "T-1", -500},
		{"an amount past the bound", "T-1", bounds.MaxCents + 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			n.refused(t, n.signed(paid(n.orderNo, c.trade, c.cents)), payment.ErrUnusable)
		})
	}
}

// A usable payment goes down the payment path once: the longest trade
// number the ledger holds is recorded, and the same notification again is
// acknowledged without a second row. A refund update for a number nobody
// opened is not found.
func TestNotifiedRecordsOnce(t *testing.T) {
	t.Parallel()
	n := newNotifier(t)
	body := paid(n.orderNo, strings.Repeat("t", 64), 500)
	for _, name := range []string{"first", "repeat"} {
		t.Run(name, func(t *testing.T) {
			if err := n.signed(body); err != nil {
				t.Fatalf("notified: %v", err)
			}
			if diff := cmp.Diff(ledger{Payments: 1, Status: "paid"}, n.ledger(t)); diff != "" {
				t.Errorf("ledger (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("unknown refund", func(t *testing.T) {
		b, _ := json.Marshal(map[string]string{"out_request_no": "RFnobody", "status": pay.RefundSucceeded})
		if err := n.signed(b); !errors.Is(err, refund.ErrNotFound) {
			t.Errorf("notified: %v, want refund.ErrNotFound", err)
		}
	})
}
