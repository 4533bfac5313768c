package payments

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"orderflow/internal/domain/refund"
	"orderflow/internal/testenv"
)

// refundFake is what the partial-refund suite needs of one provider's fake.
type refundFake struct {
	name string
	// paid pays a created order at the provider; the suite waits for it to finish.
	paid func(t *testing.T, orderNo string)
	// sends is how many refund calls carried refundNo.
	sends func(refundNo string) int
	// refunded is what the fake returned of the order's trade, in cents.
	refunded func(orderNo, tradeNo string) int64
}

// refundShop is a running stack with the provider enabled, a buyer and a
// card product of 5000 cents a key.
type refundShop struct {
	s     *testenv.Stack
	buyer *testenv.Client
	pid   int64
	f     refundFake
}

// refundAnswer is the 201 body, or the error body of a refusal.
type refundAnswer struct {
	RefundNo    string `json:"refund_no"`
	Status      string `json:"status"`
	AmountCents int64  `json:"amount_cents"`
	Error       struct {
		Code string `json:"code"`
	} `json:"error"`
}

// orderRefunds is the order view's part the suite reads.
type orderRefunds struct {
	OrderNo       string `json:"order_no"`
	Status        string `json:"status"`
	AmountCents   int64  `json:"amount_cents"`
	RefundedCents int64  `json:"refunded_cents"`
	TradeNo       string `json:"trade_no"`
	Refunds       []struct {
		RefundNo    string `json:"refund_no"`
		Status      string `json:"status"`
		AmountCents int64  `json:"amount_cents"`
	} `json:"refunds"`
}

// ask sends one operator refund; safe from goroutines.
func (a *refundShop) ask(orderNo, key string, body any) (int, refundAnswer, error) {
	raw, _ := json.Marshal(body)
	var headers []string
	if key != "" {
		headers = []string{"Idempotency-Key", key}
	}
	st, out, err := a.s.Admin.Send("POST", "/api/v1/admin/orders/"+orderNo+"/refunds", raw, headers...)
	var ans refundAnswer
	if err == nil && len(out) > 0 {
		err = json.Unmarshal(out, &ans)
	}
	return st, ans, err
}

func (a *refundShop) view(t *testing.T, orderNo string) orderRefunds {
	t.Helper()
	var v orderRefunds
	if st := a.buyer.Do(t, "GET", "/api/v1/orders/"+orderNo, nil, &v); st != 200 {
		t.Fatalf("get order %s: %d", orderNo, st)
	}
	return v
}

// finishedCardOrder is a 3-key card order paid at the provider and delivered.
func (a *refundShop) finishedCardOrder(t *testing.T) orderRefunds {
	t.Helper()
	o := a.buyer.CreateOrder(t, a.pid, 3)
	a.f.paid(t, o.OrderNo)
	a.s.WaitStatus(t, o.OrderNo, 5 /* finished */, 20*time.Second)
	v := a.view(t, o.OrderNo)
	if v.AmountCents != 15000 || len(v.Refunds) != 0 || v.RefundedCents != 0 {
		t.Fatalf("finished order %+v, want 15000 cents and no refund", v)
	}
	return v
}

// runPartialRefunds is the operator-refund suite every provider passes.
func runPartialRefunds(t *testing.T, a *refundShop) {
	t.Run("one key of three refunded once however often the request is retried", func(t *testing.T) {
		o := a.finishedCardOrder(t)
		no := o.OrderNo
		body := map[string]any{"amount_cents": 5000, "reason": "one bad key of three"}
		var first refundAnswer
		for i := range 4 {
			st, ans, err := a.ask(no, "bad-key-"+no, body)
			if err != nil || st != 201 || ans.AmountCents != 5000 || ans.RefundNo == "" {
				t.Fatalf("request %d: %d %+v %v", i, st, ans, err)
			}
			if i == 0 {
				first = ans
			} else if ans.RefundNo != first.RefundNo {
				t.Fatalf("retry %d answered refund %s, the first was %s", i, ans.RefundNo, first.RefundNo)
			}
		}
		if want := refund.OperatorNumber(no, "bad-key-"+no); first.RefundNo != want {
			t.Errorf("refund_no %s, want %s (from the order and the key)", first.RefundNo, want)
		}
		testenv.Eventually(t, 20*time.Second, "refund "+first.RefundNo+" succeeded", func() (bool, error) {
			v := a.view(t, no)
			return len(v.Refunds) == 1 && v.Refunds[0].Status == "succeeded", nil
		})
		v := a.view(t, no)
		if v.Status != "finished" || v.RefundedCents != 5000 || v.Refunds[0].AmountCents != 5000 {
			t.Errorf("order after the refund: %+v, want finished with refunded_cents 5000", v)
		}
		if n := a.f.sends(first.RefundNo); n != 1 {
			t.Errorf("the fake saw %d refund calls for %s, want 1", n, first.RefundNo)
		}
		if got := a.f.refunded(no, v.TradeNo); got != 5000 {
			t.Errorf("the fake returned %d cents of the trade, want 5000", got)
		}
		if n := a.s.Count(t, "SELECT COUNT(*) FROM refunds WHERE order_no = ?", no); n != 1 {
			t.Errorf("%d refund rows, want 1", n)
		}
		if n := a.s.Count(t, "SELECT COUNT(*) FROM audit_entries WHERE object = ? AND action = 'order_refund'", no); n != 1 {
			t.Errorf("%d audit entries for the refund, want 1", n)
		}
		// The same key for another amount is another request.
		if st, ans, err := a.ask(no, "bad-key-"+no, map[string]any{"amount_cents": 4000, "reason": "one bad key of three"}); err != nil || st != 422 || ans.Error.Code != "idempotency_key_reused" {
			t.Errorf("same key, another amount: %d %+v %v; want 422 idempotency_key_reused", st, ans, err)
		}
	})

	t.Run("two refunds at once past the payment: one 201, one refund_exceeds_payment", func(t *testing.T) {
		o := a.finishedCardOrder(t)
		no := o.OrderNo
		var wg sync.WaitGroup
		sts := make([]int, 2)
		codes := make([]string, 2)
		errs := make([]error, 2)
		for i := range 2 {
			wg.Go(func() {
				var ans refundAnswer
				sts[i], ans, errs[i] = a.ask(no, fmt.Sprintf("op%d-%s", i, no), map[string]any{"amount_cents": 10000, "reason": fmt.Sprintf("operator %d", i)})
				codes[i] = ans.Error.Code
			})
		}
		wg.Wait()
		created, refused := 0, 0
		for i := range 2 {
			switch {
			case errs[i] != nil:
				t.Fatalf("refund %d: %v", i, errs[i])
			case sts[i] == 201:
				created++
			case sts[i] == 409 && codes[i] == "refund_exceeds_payment":
				refused++
			default:
				t.Errorf("refund %d answered %d %q", i, sts[i], codes[i])
			}
		}
		if created != 1 || refused != 1 {
			t.Fatalf("%d created, %d refused; want one of each", created, refused)
		}
		testenv.Eventually(t, 20*time.Second, "the refund succeeded", func() (bool, error) {
			v := a.view(t, no)
			return len(v.Refunds) == 1 && v.Refunds[0].Status == "succeeded", nil
		})
		v := a.view(t, no)
		if v.RefundedCents != 10000 {
			t.Errorf("refunded_cents %d, want 10000", v.RefundedCents)
		}
		if got := a.f.refunded(no, v.TradeNo); got > v.AmountCents || got != 10000 {
			t.Errorf("the fake returned %d cents of a %d-cent payment, want 10000", got, v.AmountCents)
		}
		// What is left can still be refunded, and not a cent more.
		if st, ans, _ := a.ask(no, "rest-"+no, map[string]any{"amount_cents": 5001}); st != 409 || ans.Error.Code != "refund_exceeds_payment" {
			t.Errorf("5001 of the 5000 left: %d %+v", st, ans)
		}
		if st, ans, _ := a.ask(no, "rest-"+no, map[string]any{"amount_cents": 5000}); st != 201 {
			t.Errorf("the 5000 left: %d %+v", st, ans)
		}
	})
}
