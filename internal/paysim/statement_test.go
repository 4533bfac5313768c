package paysim

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// readStatement pages through day's statement with limit and returns every
// line and the size of each page.
func readStatement(t *testing.T, c *Client, day string, limit int) ([]StatementLine, []int) {
	t.Helper()
	var lines []StatementLine
	var sizes []int
	cursor := ""
	for {
		page, err := c.Statement(context.Background(), day, cursor, limit)
		if err != nil {
			t.Fatalf("statement %s after %d pages: %v", day, len(sizes), err)
		}
		if page.Date != day {
			t.Fatalf("page date %q, want %q", page.Date, day)
		}
		lines = append(lines, page.Lines...)
		sizes = append(sizes, len(page.Lines))
		if !page.HasMore {
			return lines, sizes
		}
		if page.NextCursor == "" || page.NextCursor == cursor {
			t.Fatalf("has_more with cursor %q after %q", page.NextCursor, cursor)
		}
		cursor = page.NextCursor
	}
}

func TestStatementSyntheticLinesPageWithoutRepeats(t *testing.T) {
	b := setup(t, Config{})
	const n = 10_000
	if err := b.client.Synthesize(context.Background(), "2026-11-30", n, "BENCH"); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{0, 777} {
		lines, sizes := readStatement(t, b.client, "2026-11-30", limit)
		if len(lines) != n {
			t.Fatalf("limit %d: %d lines, want %d", limit, len(lines), n)
		}
		seen := make(map[string]bool, n)
		for _, l := range lines {
			seen[l.TradeNo] = true
		}
		if len(seen) != n {
			t.Errorf("limit %d: %d distinct trade numbers, want %d", limit, len(seen), n)
		}
		most := limit
		if limit == 0 {
			most = MaxStatementLimit
		}
		for i, size := range sizes {
			if size > most {
				t.Errorf("limit %d: page %d holds %d lines", limit, i, size)
			}
		}
	}
	lines, _ := readStatement(t, b.client, "2026-11-30", 0)
	want := StatementLine{
		Kind: KindPayment, TradeNo: "BENCH000001234", OrderNo: "BENCH000001234", Ref: "BENCH000001234",
		AmountCents: 100 + 1234%900, FeeCents: 3, At: time.Date(2026, 11, 30, 0, 20, 34, 0, time.UTC),
	}
	if diff := cmp.Diff(want, lines[1234]); diff != "" {
		t.Errorf("line 1234 (-want +got):\n%s", diff)
	}
	if other, _ := readStatement(t, b.client, "2026-11-29", 0); len(other) != 0 {
		t.Errorf("the day before holds %d lines, want none", len(other))
	}
}

// TestStatementOverAdminRoutes drives every statement knob the way make
// chaos does, over HTTP, and reads the day back.
func TestStatementOverAdminRoutes(t *testing.T) {
	rc := newReceiver(t, nil)
	b := setup(t, Config{NotifyBaseURL: rc.srv.URL})
	ctx := context.Background()
	c := b.client
	day := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	at := func(h, m int) time.Time { return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }
	mustClock := func(tm time.Time) {
		t.Helper()
		if err := c.SetClock(ctx, tm); err != nil {
			t.Fatal(err)
		}
	}

	mustClock(at(9, 0))
	paid, _, err := c.Pay(ctx, "O-1", 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	dropped, _, err := c.Pay(ctx, "O-2", 2000, "")
	if err != nil {
		t.Fatal(err)
	}
	altered, _, err := c.Pay(ctx, "O-3", 3000, "")
	if err != nil {
		t.Fatal(err)
	}
	mustClock(at(10, 0))
	if _, err := c.Refund(ctx, RefundRequest{OutRequestNo: "R-1", TradeNo: paid, OrderNo: "O-1", AmountCents: 300}); err != nil {
		t.Fatal(err)
	}
	dash, err := c.DashboardRefund(ctx, "O-1", 700)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.DashboardRefund(ctx, "O-1", 1); statusOf(t, err) != http.StatusConflict {
		t.Errorf("refund past the payment: %v, want 409", err)
	}
	if _, err := c.DashboardRefund(ctx, "O-none", 1); statusOf(t, err) != http.StatusNotFound {
		t.Errorf("dashboard refund of an unpaid order: %v, want 404", err)
	}
	mustClock(at(23, 59))
	unseen, err := c.PayUnseen(ctx, "O-4", 4000)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StatementDrop(ctx, dropped); err != nil {
		t.Fatal(err)
	}
	if err := c.StatementAlter(ctx, altered, 2999); err != nil {
		t.Fatal(err)
	}

	_, err = c.Statement(ctx, "2026-12-01", "", 0)
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != http.StatusConflict || he.Code != "statement_not_ready" {
		t.Errorf("statement of a day not over: %v, want 409 statement_not_ready", err)
	}
	mustClock(at(24, 0))
	got, _ := readStatement(t, c, "2026-12-01", 0)
	want := []StatementLine{
		{Kind: KindPayment, TradeNo: paid, OrderNo: "O-1", Ref: paid, AmountCents: 1000, FeeCents: 6, At: at(9, 0)},
		{Kind: KindPayment, TradeNo: altered, OrderNo: "O-3", Ref: altered, AmountCents: 2999, FeeCents: 18, At: at(9, 0)},
		{Kind: KindRefund, TradeNo: paid, OrderNo: "O-1", RefundNo: "R-1", Ref: "R-1", AmountCents: 300, At: at(10, 0)},
		{Kind: KindRefund, TradeNo: paid, OrderNo: "O-1", Ref: dash, AmountCents: 700, At: at(10, 0)},
		{Kind: KindPayment, TradeNo: unseen, OrderNo: "O-4", Ref: unseen, AmountCents: 4000, FeeCents: 24, At: at(23, 59)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statement (-want +got):\n%s", diff)
	}
	if got := len(rc.requests(paymentNotifyPath)); got != 3 {
		t.Errorf("%d payment notifications, want 3 (none for the unseen payment)", got)
	}
	if got := b.sim.TradeRefunded(paid); got != 1000 {
		t.Errorf("trade refunded %d cents, want 1000 (the dashboard's counted)", got)
	}

	// Back to the real clock.
	if err := c.ShiftClock(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(b.sim.Now()); d < -time.Second || d > time.Minute {
		t.Errorf("clock after reset is %v off the real time", d)
	}
}

func TestStatementRefusesBadRequests(t *testing.T) {
	b := setup(t, Config{})
	ctx := context.Background()
	for _, q := range []struct{ day, cursor string }{
		{"", ""}, {"2026-13-01", ""}, {"01/12/2026", ""}, {"2026-12-01", "x"}, {"2026-12-01", "-1"},
	} {
		if _, err := b.client.Statement(ctx, q.day, q.cursor, 0); statusOf(t, err) != http.StatusBadRequest {
			t.Errorf("date %q cursor %q: %v, want 400", q.day, q.cursor, err)
		}
	}
	if _, err := b.client.Statement(ctx, "2026-12-01", "", MaxStatementLimit+1); statusOf(t, err) != http.StatusBadRequest {
		t.Errorf("limit past the most: %v, want 400", err)
	}
	unsigned := &Client{BaseURL: b.url, Secret: "not-the-secret"}
	if _, err := unsigned.Statement(ctx, "2026-12-01", "", 0); statusOf(t, err) != http.StatusUnauthorized {
		t.Errorf("badly signed request: %v, want 401", err)
	}
	if err := b.client.Synthesize(ctx, "2026-12-1", 1, "X"); statusOf(t, err) != http.StatusBadRequest {
		t.Errorf("synthesize a bad day: %v, want 400", err)
	}
	if err := b.sim.Synthesize("2026-12-01", -1, "X"); err == nil {
		t.Error("synthesize -1 lines: no error")
	}
	if _, err := b.sim.PayUnseen("O-x", 0); err == nil {
		t.Error("unseen payment of 0 cents: no error")
	}
}

// TestStatementLargeDayOnlyPagesInMemory shows the answer for a day of a
// million synthetic lines is one page, not the day.
func TestStatementLargeDayOnlyPagesInMemory(t *testing.T) {
	b := setup(t, Config{})
	if err := b.sim.Synthesize("2026-11-30", 1_000_000, "M"); err != nil {
		t.Fatal(err)
	}
	page, err := b.client.Statement(context.Background(), "2026-11-30", "999000", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Lines) != 1000 || page.HasMore || page.Lines[999].TradeNo != fmt.Sprintf("M%09d", 999_999) {
		t.Errorf("last page: %d lines, has_more %v", len(page.Lines), page.HasMore)
	}
}

// TestStatementListsARefundOnceItSucceeds: a processing refund has moved
// no money yet; it enters the statement when it succeeds, at that time.
func TestStatementListsARefundOnceItSucceeds(t *testing.T) {
	rc := newReceiver(t, nil)
	b := setup(t, Config{NotifyBaseURL: rc.srv.URL, CallbackDelay: 200 * time.Millisecond})
	ctx := context.Background()
	b.sim.SetClock(func() time.Time { return time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC) })
	if _, err := b.client.Refund(ctx, RefundRequest{OutRequestNo: "R-slow", TradeNo: "T1", OrderNo: "O1", AmountCents: 5}); err != nil {
		t.Fatal(err)
	}
	b.sim.SetClock(func() time.Time { return time.Date(2026, 12, 2, 0, 0, 1, 0, time.UTC) })
	rc.wait(refundNotifyPath)
	b.sim.SetClock(func() time.Time { return time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC) })
	if lines, _ := readStatement(t, b.client, "2026-12-01", 0); len(lines) != 0 {
		t.Errorf("day of the request lists %+v, want nothing", lines)
	}
	lines, _ := readStatement(t, b.client, "2026-12-02", 0)
	if len(lines) != 1 || lines[0].Ref != "R-slow" || lines[0].At != time.Date(2026, 12, 2, 0, 0, 1, 0, time.UTC) {
		t.Errorf("day of the success lists %+v, want R-slow at 00:00:01", lines)
	}
}
