package wechat_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"orderflow/internal/domain/refund"
	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/pay/paytest"

	"github.com/google/go-cmp/cmp"
)

// bjt is Beijing time for the test's expectations.
var bjt = time.FixedZone("CST", 8*3600)

func setClock(b *bundle, at time.Time) *clock.Fake {
	c := clock.NewFake(at)
	b.fake.SetClock(c.Now)
	return c
}

// collect reads a day's statement, every page checked for its size.
func collect(t *testing.T, b *bundle, day string) ([]pay.StatementLine, int, error) {
	t.Helper()
	var lines []pay.StatementLine
	pages := 0
	err := b.p.Statement(context.Background(), day, func(page []pay.StatementLine) error {
		pages++
		if len(page) == 0 || len(page) > pay.StatementPage {
			t.Errorf("page of %d lines; want 1..%d", len(page), pay.StatementPage)
		}
		lines = append(lines, page...)
		return nil
	})
	return lines, pages, err
}

// A day's bill lists, from what WeChat Pay really processed: payments (one
// notified, one never heard of), orderflow's partial refund under its own
// number, a dashboard refund with no orderflow number, minus a dropped line
// and with an altered amount; Paid.At and the line's At are WeChat Pay's
// success_time, TradeNo the same transaction_id QueryPayment gives, and the
// day is Beijing's (23:30 UTC belongs to the next day).
func TestStatementLines(t *testing.T) {
	b := setup(t, 5*time.Second)
	ctx := context.Background()
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, bjt)
	clk := setClock(b, day.Add(-30*time.Minute)) // 2026-11-19 23:30 Beijing: the day before

	before := paidOrder(t, b, "O-before")
	clk.Set(time.Date(2026, 11, 19, 23, 30, 0, 0, time.UTC)) // 07:30 on the 20th in Beijing
	early := paidOrder(t, b, "O-early")
	if !early.At.Equal(clk.Now()) {
		t.Fatalf("Paid.At = %v, want the fake's success_time %v", early.At, clk.Now())
	}
	clk.Set(day.Add(10 * time.Hour))
	refunded := paidOrder(t, b, "O-refunded")
	ourNo := refund.OperatorNumber("O-refunded", "key-1")
	if _, err := b.p.Refund(ctx, pay.RefundRequest{RefundNo: ourNo, OrderNo: "O-refunded", TradeNo: refunded.TradeNo, AmountCents: 2000, TotalCents: 5000}); err != nil {
		t.Fatal(err)
	}
	clk.Set(day.Add(11 * time.Hour))
	dashRef, err := b.fake.DashboardRefund("O-refunded", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.fake.OrderRefunded("O-refunded"); got != 3000 {
		t.Fatalf("fake counts %d refunded, want both refunds (3000)", got)
	}
	dropped := paidOrder(t, b, "O-dropped")
	b.fake.StatementDrop(dropped.TradeNo)
	clk.Set(day.Add(12 * time.Hour))
	altered := paidOrder(t, b, "O-altered")
	b.fake.StatementAlter(altered.TradeNo, 4500)
	clk.Set(day.Add(13 * time.Hour))
	unseenNo, err := b.fake.PayUnseen("O-unseen", 700)
	if err != nil {
		t.Fatal(err)
	}
	if paid, err := b.p.QueryPayment(ctx, "O-unseen", ""); err != nil || paid == nil || paid.TradeNo != unseenNo || paid.AmountCents != 700 {
		t.Fatalf("query of the unseen payment = %+v, %v; want paid 700 as %s", paid, err, unseenNo)
	}
	clk.Set(time.Date(2026, 11, 20, 16, 30, 0, 0, time.UTC)) // 00:30 on the 21st in Beijing
	after := paidOrder(t, b, "O-after")

	clk.Set(day.AddDate(0, 0, 2))
	lines, pages, err := collect(t, b, "2026-11-20")
	if err != nil {
		t.Fatal(err)
	}
	if pages != 1 {
		t.Errorf("%d pages, want 1", pages)
	}
	at := func(h, m int) time.Time { return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }
	want := []pay.StatementLine{
		{Kind: pay.LinePayment, TradeNo: early.TradeNo, OrderNo: "O-early", Ref: early.TradeNo, AmountCents: 5000, FeeCents: 30, At: at(7, 30)},
		{Kind: pay.LinePayment, TradeNo: refunded.TradeNo, OrderNo: "O-refunded", Ref: refunded.TradeNo, AmountCents: 5000, FeeCents: 30, At: at(10, 0)},
		{Kind: pay.LineRefund, TradeNo: refunded.TradeNo, OrderNo: "O-refunded", RefundNo: ourNo, Ref: refundID(t, b, ourNo), AmountCents: 2000, FeeCents: -12, At: at(10, 0)},
		{Kind: pay.LineRefund, TradeNo: refunded.TradeNo, OrderNo: "O-refunded", RefundNo: dashRef, Ref: dashRef, AmountCents: 1000, FeeCents: -6, At: at(11, 0)},
		{Kind: pay.LinePayment, TradeNo: altered.TradeNo, OrderNo: "O-altered", Ref: altered.TradeNo, AmountCents: 4500, FeeCents: 27, At: at(12, 0)},
		{Kind: pay.LinePayment, TradeNo: unseenNo, OrderNo: "O-unseen", Ref: unseenNo, AmountCents: 700, FeeCents: 4, At: at(13, 0)},
	}
	if diff := cmp.Diff(want, lines, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("statement of 2026-11-20 (-want +got):\n%s", diff)
	}
	for _, l := range lines {
		if l.At.Location().String() != b.p.StatementZone().String() {
			t.Errorf("line %s at %v, want it in %v", l.Ref, l.At, b.p.StatementZone())
		}
	}
	// The neighbours are on their own Beijing days.
	for d, p := range map[string]*pay.Paid{"2026-11-19": before, "2026-11-21": after} {
		lines, _, err := collect(t, b, d)
		if err != nil || len(lines) != 1 || lines[0].TradeNo != p.TradeNo {
			t.Errorf("statement of %s = %+v, %v; want only %s", d, lines, err, p.OrderNo)
		}
	}
}

// refundID is WeChat Pay's refund_id of an orderflow refund, as its query
// answers it.
func refundID(t *testing.T, b *bundle, refundNo string) string {
	t.Helper()
	id := b.fake.RefundID(refundNo)
	if id == "" {
		t.Fatalf("fake holds no refund %s", refundNo)
	}
	return id
}

// A day of more lines than a page arrives in several pages, none longer
// than pay.StatementPage; fn's error stops the read and is returned.
func TestStatementPages(t *testing.T) {
	b := setup(t, 5*time.Second)
	day := time.Date(2026, 11, 20, 9, 0, 0, 0, bjt)
	clk := setClock(b, day)
	n := 2*pay.StatementPage + 5
	for i := range n {
		if _, err := b.fake.PayUnseen(fmt.Sprintf("O%05d", i), int64(100+i)); err != nil {
			t.Fatal(err)
		}
	}
	clk.Set(day.AddDate(0, 0, 1))
	lines, pages, err := collect(t, b, "2026-11-20")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var cents int64
	for _, l := range lines {
		seen[l.Ref] = true
		cents += l.AmountCents
	}
	if len(lines) != n || len(seen) != n || pages != 3 || cents != int64(n)*100+int64(n*(n-1)/2) {
		t.Fatalf("%d lines (%d distinct, %d cents) in %d pages; want %d in 3", len(lines), len(seen), cents, pages, n)
	}
	paytest.CheckStatementStops(t, b.p, "2026-11-20")
}

// A bill file spoiled on the way (its SHA1 no longer the signed one) and a
// trade bill answer not signed by WeChat Pay are errors, and not one line
// reaches fn.
func TestStatementTampered(t *testing.T) {
	for name, tc := range map[string]struct {
		knob func(*bundle)
		want string
	}{
		"bad hash":      {func(b *bundle) { b.fake.TamperBill.Store(true) }, "SHA1"},
		"bad signature": {func(b *bundle) { b.fake.MisSignBill.Store(true) }, "verif"},
	} {
		t.Run(name, func(t *testing.T) {
			b := setup(t, 5*time.Second)
			day := time.Date(2026, 11, 20, 9, 0, 0, 0, bjt)
			clk := setClock(b, day)
			for i := range 3 {
				if _, err := b.fake.PayUnseen(fmt.Sprintf("O%d", i), 1000); err != nil {
					t.Fatal(err)
				}
			}
			clk.Set(day.AddDate(0, 0, 1))
			if lines, _, err := collect(t, b, "2026-11-20"); err != nil || len(lines) != 3 {
				t.Fatalf("genuine bill: %d lines, %v; want 3", len(lines), err)
			}
			tc.knob(b)
			lines, _, err := collect(t, b, "2026-11-20")
			if err == nil || len(lines) != 0 {
				t.Fatalf("spoiled bill: %d lines handed, err %v; want an error and none", len(lines), err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("spoiled bill: %v; want an error about the %s", err, tc.want)
			}
		})
	}
}

// A day WeChat Pay has not finished is not ready; a day that is not a date
// is an error of its own.
func TestStatementNotReadyAndBadDay(t *testing.T) {
	b := setup(t, 5*time.Second)
	setClock(b, time.Date(2026, 11, 20, 23, 59, 0, 0, bjt))
	if _, _, err := collect(t, b, "2026-11-20"); !errors.Is(err, pay.ErrStatementNotReady) {
		t.Fatalf("today's bill: %v, want ErrStatementNotReady", err)
	}
	if lines, _, err := collect(t, b, "2026-11-19"); err != nil || len(lines) != 0 {
		t.Fatalf("yesterday's empty bill: %d lines, %v; want none, no error", len(lines), err)
	}
	for _, day := range []string{"", "2026-13-01", "20261119", "2026-11-19T00:00:00Z"} {
		_, _, err := collect(t, b, day)
		if err == nil || errors.Is(err, pay.ErrStatementNotReady) {
			t.Errorf("day %q: %v, want an error about the day", day, err)
		}
	}
	if got := b.p.StatementZone(); got.String() != "Asia/Shanghai" {
		t.Errorf("zone %v, want Asia/Shanghai", got)
	}
}
