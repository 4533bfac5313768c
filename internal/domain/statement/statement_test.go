package statement_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"orderflow/internal/domain/statement"
	"orderflow/internal/paysim"
	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/google/go-cmp/cmp"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// One paysim day against the ledger (MariaDB, and the dev mode's SQLite):
// a matched payment, a dashboard refund, a dropped line, an altered amount,
// a payment the ledger never heard of for a pending order (applied) and one
// for an order that does not exist (left open). Then the same day again:
// nothing new, nothing applied twice.
func TestRunADay(t *testing.T) {
	t.Parallel()
	testenv.EachBackend(t, testRunADay)
}

func testRunADay(t *testing.T, backend testenv.Backend) {
	s := testenv.Start(t, testenv.Options{Backend: backend, NoWorker: true})
	ctx := context.Background()
	uc, st := s.UC, s.SC.Store
	day := time.Now().UTC().AddDate(0, 0, -2)
	s.Sim.SetClock(func() time.Time { return time.Date(day.Year(), day.Month(), day.Day(), 10, 0, 0, 0, time.UTC) })
	dayStr := day.Format("2006-01-02")

	shop := s.NewShop(t, "stmt", 500)
	orders := make([]string, 5)
	trades := make([]string, 4)
	for i := range orders {
		orders[i] = shop.Order(t)
		if i == 4 {
			break // pending: its payment arrives unseen
		}
		var err error
		if trades[i], _, err = s.Pay.Pay(ctx, orders[i], 500, ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Sim.DashboardRefund(orders[1], 200); err != nil {
		t.Fatal(err)
	}
	// A refund under a number of orderflow's form that orderflow never
	// sent (another system on the same account): recorded as a dashboard one.
	if st, err := s.Pay.Refund(ctx, paysim.RefundRequest{OutRequestNo: "RF0123456789abcdef01234567", TradeNo: trades[0],
		OrderNo: orders[0], AmountCents: 100}); err != nil || st.Status != "succeeded" {
		t.Fatalf("refund at the simulator under an unknown number: %+v, %v", st, err)
	}
	s.Sim.StatementDrop(trades[2])
	s.Sim.StatementAlter(trades[3], 999)
	if _, err := s.Sim.PayUnseen(orders[4], 500); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sim.PayUnseen("O-NOT-OURS", 300); err != nil {
		t.Fatal(err)
	}
	s.Sim.SetClock(nil) // the day is over

	run := func() (*statement.RunView, []model.StatementBreak) {
		t.Helper()
		r, err := uc.Statements.Open(ctx, "paysim", dayStr)
		if err != nil {
			t.Fatal(err)
		}
		if err := uc.Statements.Run(ctx, r.ID, 0, 10); err != nil {
			t.Fatal(err)
		}
		v, err := uc.Statements.Get(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if v.Run.Status != model.StatementDone {
			t.Fatalf("run %d is %s (%s), want done", r.ID, v.Run.Status, v.Run.Error)
		}
		bs, err := uc.Statements.Breaks(ctx, "", "paysim")
		if err != nil {
			t.Fatal(err)
		}
		return v, bs
	}
	first, breaks := run()
	want := map[string]int64{statement.BreakUnknownRefund: 2, statement.BreakMissingPayment: 1, statement.BreakAmountMismatch: 1,
		statement.BreakUnknownPayment: 2}
	if diff := cmp.Diff(want, first.Breaks); diff != "" {
		t.Errorf("first run's breaks by kind (-want +got):\n%s", diff)
	}
	if got := first.Run.ProviderLines; got != 7 {
		t.Errorf("first run read %d lines, want 7 (4 payments listed of 5, the two refunds, the foreign payment)", got)
	}
	type brk struct {
		Kind, OrderNo    string
		Provider, Ledger int64
		Status           model.BreakStatus
		By               string
	}
	amt := func(v *int64) int64 {
		if v == nil {
			return -1
		}
		return *v
	}
	got := map[string]brk{}
	for _, b := range breaks {
		got[b.Kind+" "+b.OrderNo] = brk{b.Kind, b.OrderNo, amt(b.ProviderAmountCents), amt(b.LedgerAmountCents), b.Status, b.ResolvedBy}
	}
	wantBreaks := map[string]brk{
		"unknown_refund " + orders[0]:  {"unknown_refund", orders[0], 100, -1, model.BreakOpen, ""},
		"unknown_refund " + orders[1]:  {"unknown_refund", orders[1], 200, -1, model.BreakOpen, ""},
		"missing_payment " + orders[2]: {"missing_payment", orders[2], -1, 500, model.BreakOpen, ""},
		"amount_mismatch " + orders[3]: {"amount_mismatch", orders[3], 999, 500, model.BreakOpen, ""},
		"unknown_payment " + orders[4]: {"unknown_payment", orders[4], 500, -1, model.BreakResolved, statement.ResolvedBySystem},
		"unknown_payment O-NOT-OURS":   {"unknown_payment", "O-NOT-OURS", 300, -1, model.BreakOpen, ""},
	}
	if diff := cmp.Diff(wantBreaks, got); diff != "" {
		t.Errorf("breaks (-want +got):\n%s", diff)
	}
	for _, b := range breaks {
		if b.Kind != statement.BreakUnknownRefund {
			continue
		}
		evs, err := st.EventsFor(ctx, "refund", b.RefundNo)
		if err != nil || len(evs) != 2 || evs[0].FromStatus != "-" || evs[1].ToStatus != model.RefundSucceeded.String() {
			t.Errorf("history of the dashboard refund %s: %+v, %v; want its creation, then succeeded", b.RefundNo, evs, err)
		}
	}
	if o, err := st.OrderByNo(ctx, orders[4]); err != nil || o.Status != model.OrderPaid {
		t.Errorf("the unseen payment's order: %+v, %v; want paid by the statement", o, err)
	}
	if o, err := st.OrderByNo(ctx, orders[1]); err != nil || o.RefundedCents != 200 {
		t.Errorf("the dashboard-refunded order: refunded_cents %d, %v; want 200", o.RefundedCents, err)
	}
	alerts := func() int64 {
		ns, err := st.NotificationsByKind(ctx, statement.NotifyBreak)
		if err != nil {
			t.Fatal(err)
		}
		return int64(len(ns))
	}
	if o, err := st.OrderByNo(ctx, orders[0]); err != nil || o.RefundedCents != 100 {
		t.Errorf("the order refunded under an unknown number: refunded_cents %d, %v; want 100", o.RefundedCents, err)
	}
	if n := alerts(); n != 6 {
		t.Errorf("%d break alerts, want 6 (one per break)", n)
	}

	second, again := run()
	if len(second.Breaks) != 0 {
		t.Errorf("the second run of the day listed %v, want nothing new", second.Breaks)
	}
	if len(again) != len(breaks) || alerts() != 6 {
		t.Errorf("after the second run: %d breaks, %d alerts; want %d and 6", len(again), alerts(), len(breaks))
	}
	if o, err := st.OrderByNo(ctx, orders[1]); err != nil || o.RefundedCents != 200 {
		t.Errorf("after the second run, refunded_cents %d, %v; want 200 (recorded once)", o.RefundedCents, err)
	}
}

// An operator's resolve needs an open break, once; a run needs a provider
// that publishes statements and a day that is over.
func TestRefusals(t *testing.T) {
	t.Parallel()
	s := testenv.Start(t, testenv.Options{NoWorker: true})
	ctx := context.Background()
	uc := s.UC
	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02")
	today := time.Now().UTC().Format("2006-01-02")
	for _, tc := range []struct {
		provider, day string
		want          error
	}{
		{"nosuch", yesterday, statement.ErrUnknownProvider},
		{"manual", yesterday, statement.ErrUnknownProvider},
		{"paysim", today, statement.ErrInvalidDate},
		{"paysim", "2026-13-01", statement.ErrInvalidDate},
		{"paysim", "2026-1-01", statement.ErrInvalidDate},
	} {
		if _, err := uc.Statements.Open(ctx, tc.provider, tc.day); !errors.Is(err, tc.want) {
			t.Errorf("Open(%s, %s) = %v, want %v", tc.provider, tc.day, err, tc.want)
		}
	}
	a, err := uc.Statements.Open(ctx, "paysim", yesterday)
	if err != nil {
		t.Fatal(err)
	}
	b, err := uc.Statements.Open(ctx, "paysim", yesterday)
	if err != nil || b.ID != a.ID {
		t.Errorf("a second Open while the first is queued answered run %d (%v), want run %d", b.ID, err, a.ID)
	}
	if _, err := uc.Statements.Resolve(ctx, 987654, "x"); !errors.Is(err, statement.ErrBreakNotFound) {
		t.Errorf("Resolve of no break = %v, want ErrBreakNotFound", err)
	}
	if _, err := uc.Statements.Breaks(ctx, "closed", ""); !errors.Is(err, statement.ErrInvalidStatus) {
		t.Errorf("Breaks(closed) = %v, want ErrInvalidStatus", err)
	}
}
