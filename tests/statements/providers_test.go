package statements

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"orderflow/internal/infra/pay"
	alipayfake "orderflow/internal/payfake/alipay"
	stripefake "orderflow/internal/payfake/stripe"
	wechatfake "orderflow/internal/payfake/wechat"
	"orderflow/internal/testenv"
)

// shanghai is Alipay's and WeChat Pay's calendar (UTC+8 all year).
var shanghai = time.FixedZone("CST", 8*3600)

func TestPaysim(t *testing.T) {
	ctx := context.Background()
	var a *shop
	var mu sync.Mutex
	trades := map[string]string{} // order → trade, as the simulator answered
	keep := func(orderNo, tradeNo string) {
		mu.Lock()
		defer mu.Unlock()
		trades[orderNo] = tradeNo
	}
	p := fakeProvider{
		name:  pay.NamePaysim,
		zone:  time.UTC,
		knobs: simAdmin{t: t, shop: &a, keep: keep},
		pay: func(t *testing.T, orderNo string, cents int64) {
			t.Helper()
			tradeNo, st, err := a.s.Pay.Pay(ctx, orderNo, cents, "")
			if err != nil || st != http.StatusOK {
				t.Fatalf("pay %s at the simulator: status %d, %v", orderNo, st, err)
			}
			keep(orderNo, tradeNo)
		},
		tradeNo: func(orderNo string) string {
			mu.Lock()
			defer mu.Unlock()
			return trades[orderNo]
		},
		refundSends: func(no string) int { return a.s.Sim.Stats().Refunds[no].Calls },
		refundCalls: func() int {
			n := 0
			for _, r := range a.s.Sim.Stats().Refunds {
				n += r.Calls
			}
			return n
		},
		refunded: func(_, tradeNo string) int64 { return a.s.Sim.TradeRefunded(tradeNo) },
	}
	a = startShop(t, p, testenv.FakeShop{})
	runStatementDay(t, a)
}

func TestAlipay(t *testing.T) {
	ctx := context.Background()
	f, fs := testenv.StartAlipayFake(t)
	p := fakeProvider{
		name:  pay.NameAlipay,
		zone:  shanghai,
		knobs: f,
		pay: func(t *testing.T, orderNo string, _ int64) {
			t.Helper()
			answers, err := f.Pay(ctx, orderNo, alipayfake.PayOptions{})
			if err != nil || len(answers) != 1 || answers[0].Body != "success" {
				t.Fatalf("pay %s at alipay: %+v, %v", orderNo, answers, err)
			}
		},
		tradeNo:     f.TradeNo,
		refundSends: f.RefundSends,
		refundCalls: func() int { return len(f.Refunded()) },
		refunded:    func(orderNo, _ string) int64 { return f.TradeRefunded(orderNo) },
	}
	runStatementDay(t, startShop(t, p, fs))
}

func TestWechat(t *testing.T) {
	f, fs := testenv.StartWechatFake(t)
	runStatementDay(t, startShop(t, wechatProvider(f), fs))
}

func TestStripe(t *testing.T) {
	f, fs := testenv.StartStripeFake(t)
	runStatementDay(t, startShop(t, stripeProvider(f), fs))
}

// wechatProvider is the suite's view of a WeChat Pay fake.
func wechatProvider(f *wechatfake.Fake) fakeProvider {
	return fakeProvider{
		name:  pay.NameWechat,
		zone:  shanghai,
		knobs: f,
		pay: func(t *testing.T, orderNo string, _ int64) {
			t.Helper()
			if _, st, err := f.Pay(context.Background(), orderNo); err != nil || (st != http.StatusOK && st != http.StatusNoContent) {
				t.Fatalf("pay %s at wechat: status %d, %v", orderNo, st, err)
			}
		},
		tradeNo:     f.TradeNo,
		refundSends: f.RefundSends,
		refundCalls: f.Refunds,
		refunded:    func(orderNo, _ string) int64 { return f.OrderRefunded(orderNo) },
	}
}

// stripeProvider is the suite's view of a Stripe fake.
func stripeProvider(f *stripefake.Fake) fakeProvider {
	return fakeProvider{
		name:  pay.NameStripe,
		zone:  time.UTC,
		knobs: f,
		pay: func(t *testing.T, orderNo string, _ int64) {
			t.Helper()
			if _, st, err := f.Pay(context.Background(), orderNo); err != nil || st/100 != 2 {
				t.Fatalf("pay %s at stripe: status %d, %v", orderNo, st, err)
			}
		},
		tradeNo:     f.IntentID,
		refundSends: f.RefundSends,
		refundCalls: f.Refunds,
		refunded:    func(_, tradeNo string) int64 { return f.IntentRefunded(tradeNo) },
	}
}

// simAdmin is the simulator's statement knobs through its admin routes, as
// a harness running it as its own process would; the clock is set in
// process (the shop's simulator).
type simAdmin struct {
	t    *testing.T
	shop **shop
	keep func(orderNo, tradeNo string) // the trades paid unseen, for the test's lookups
}

func (k simAdmin) SetClock(now func() time.Time) { (*k.shop).s.Sim.SetClock(now) }

func (k simAdmin) StatementDrop(ref string) {
	if err := (*k.shop).s.Pay.StatementDrop(context.Background(), ref); err != nil {
		k.t.Fatal(err)
	}
}

func (k simAdmin) StatementAlter(ref string, cents int64) {
	if err := (*k.shop).s.Pay.StatementAlter(context.Background(), ref, cents); err != nil {
		k.t.Fatal(err)
	}
}

func (k simAdmin) DashboardRefund(orderNo string, cents int64) (string, error) {
	return (*k.shop).s.Pay.DashboardRefund(context.Background(), orderNo, cents)
}

func (k simAdmin) PayUnseen(orderNo string, cents int64) (string, error) {
	tradeNo, err := (*k.shop).s.Pay.PayUnseen(context.Background(), orderNo, cents)
	k.keep(orderNo, tradeNo)
	return tradeNo, err
}
