package statements

import (
	"context"
	"reflect"
	"testing"
	"time"

	"orderflow/internal/domain/statement"
	stripefake "orderflow/internal/payfake/stripe"
	wechatfake "orderflow/internal/payfake/wechat"
	"orderflow/internal/testenv"
	"orderflow/model"
)

// notifiedRefund makes a refund of cents of orderNo in the provider's
// dashboard and has the fake send the provider's notification of it; it
// returns the provider's refund id and the notification's HTTP answer.
type notifiedRefund func(orderNo string, cents int64) (ref string, status int, err error)

// resend sends the notification of refund ref again; it returns the
// HTTP answer.
type resend func(ref string) (status int, err error)

func TestWechatDashboardRefundNotified(t *testing.T) {
	f, fs := testenv.StartWechatFake(t)
	notify, again := viaFake[*wechatfake.Notification](f)
	runRefundNotified(t, startShop(t, wechatProvider(f), fs), notify, again)
}

func TestStripeDashboardRefundNotified(t *testing.T) {
	f, fs := testenv.StartStripeFake(t)
	notify, again := viaFake[*stripefake.Notification](f)
	runRefundNotified(t, startShop(t, stripeProvider(f), fs), notify, again)
}

// notifier is a fake whose dashboard refunds its provider notifies.
type notifier[N interface {
	Send(context.Context) (int, error)
}] interface {
	DashboardRefundNotified(ctx context.Context, orderNo string, cents int64) (ref string, status int, err error)
	RefundNotification(ref string) (N, error)
}

// viaFake is a notifying fake's dashboard refund and its resend.
func viaFake[N interface {
	Send(context.Context) (int, error)
}](f notifier[N]) (notifiedRefund, resend) {
	ctx := context.Background()
	return func(orderNo string, cents int64) (string, int, error) {
			return f.DashboardRefundNotified(ctx, orderNo, cents)
		}, func(ref string) (int, error) {
			n, err := f.RefundNotification(ref)
			if err != nil {
				return 0, err
			}
			return n.Send(ctx)
		}
}

// runRefundNotified: a refund made in the provider's dashboard that the
// provider notifies is recorded when the notification is answered — counted
// in its order's refunded_cents and listed once as an open unknown_refund
// break no run found (run_id 0) — before any statement; the same
// notification again changes nothing; the day's statement then lists
// nothing new for it: not the break again, not a missing_refund, the
// refunded_cents as they were.
func runRefundNotified(t *testing.T, a *shop, refundNotified notifiedRefund, again resend) {
	p := a.p
	day, clock := pastDay(p.zone)
	p.knobs.SetClock(clock)
	defer p.knobs.SetClock(time.Now)

	const dashboardCents = 1500
	refunded := a.delivered(t)
	tradeNo := p.tradeNo(refunded)
	ref, st, err := refundNotified(refunded, dashboardCents)
	if err != nil || st/100 != 2 {
		t.Fatalf("dashboard refund of %s notified: status %d, %v; want it recorded (2xx)", refunded, st, err)
	}

	// Recorded when the provider was answered: nothing to wait for.
	recorded := func(when string) []breakView {
		t.Helper()
		if v := a.adminOrder(t, refunded); v.RefundedCents != dashboardCents || v.Status != "finished" {
			t.Errorf("order %s %s: %+v, want finished with refunded_cents %d", refunded, when, v, dashboardCents)
		}
		if n := a.s.Count(t, "SELECT COUNT(*) FROM refunds WHERE order_no = ? AND provider = ? AND provider_ref = ? AND amount_cents = ? AND status = ?",
			refunded, p.name, ref, dashboardCents, model.RefundSucceeded); n != 1 {
			t.Errorf("%s: %d succeeded refund rows of %d cents with provider_ref %s, want 1", when, n, dashboardCents, ref)
		}
		if n := a.s.Count(t, "SELECT COUNT(*) FROM refunds WHERE order_no = ?", refunded); n != 1 {
			t.Errorf("%s: %d refund rows for order %s, want 1", when, n, refunded)
		}
		bs := a.breaks(t)
		if len(bs) != 1 {
			t.Fatalf("%s: %d breaks listed, want 1: %+v", when, len(bs), bs)
		}
		b := bs[0]
		if b.Kind != statement.BreakUnknownRefund || b.Status != "open" || b.Date != day || b.OrderNo != refunded ||
			b.TradeNo != tradeNo || b.RefundNo == "" || !is(b.ProviderAmountCents, cents(dashboardCents)) || b.Action == "" {
			t.Errorf("%s: break %+v; want an open unknown_refund of %s, order %s, trade %s, recorded under a refund_no, provider %d cents",
				when, b, day, refunded, tradeNo, dashboardCents)
		}
		if n := a.s.Count(t, "SELECT COUNT(*) FROM statement_breaks WHERE id = ? AND run_id = 0", b.ID); n != 1 {
			t.Errorf("%s: break %d was listed by a run, want run_id 0 (learned from the provider's notification)", when, b.ID)
		}
		if n := a.s.Count(t, "SELECT COUNT(*) FROM notifications WHERE kind = ? AND notify_id LIKE ?",
			statement.NotifyBreak, "statement-break:"+p.name+":%"); n != 1 {
			t.Errorf("%s: %d statement_break alerts, want 1", when, n)
		}
		if n := a.s.Count(t, "SELECT COUNT(*) FROM webhooks WHERE type = ? AND body LIKE ?",
			"statement.break", `%"provider":"`+p.name+`"%`); n != 1 {
			t.Errorf("%s: %d statement.break webhooks, want 1", when, n)
		}
		return bs
	}
	listed := recorded("once notified")

	// The provider sends it again (its answer lost): answered, nothing more.
	if st, err := again(ref); err != nil || st/100 != 2 {
		t.Fatalf("the notification again: status %d, %v; want 2xx", st, err)
	}
	recorded("notified twice")

	// The day's statement lists the refund: nothing new.
	p.knobs.SetClock(time.Now)
	run := a.waitRun(t, a.startRun(t, day))
	t.Logf("%s: run %+v", p.name, run)
	if len(run.Breaks) != 0 {
		t.Errorf("the run listed breaks %v, want none (the refund's was listed when notified; no missing_refund)", run.Breaks)
	}
	if run.ProviderLines != 2 || run.Totals.Refunds != 1 || run.Totals.RefundsCents != dashboardCents {
		t.Errorf("the run read %d lines, %d refunds of %d cents; want 2 lines, the dashboard refund of %d",
			run.ProviderLines, run.Totals.Refunds, run.Totals.RefundsCents, dashboardCents)
	}
	if after := recorded("after the statement run"); !reflect.DeepEqual(after, listed) {
		t.Errorf("the breaks changed with the run:\nbefore %+v\nafter  %+v", listed, after)
	}
	if n := a.s.Count(t, "SELECT COUNT(*) FROM statement_breaks WHERE kind = ?", statement.BreakMissingRefund); n != 0 {
		t.Errorf("%d missing_refund breaks, want none", n)
	}
	if n := a.s.Count(t, "SELECT COUNT(*) FROM refunds WHERE order_no = ? AND stated_on = ?", refunded, day); n != 1 {
		t.Errorf("the dashboard refund is not marked as stated on %s after the run", day)
	}
}
