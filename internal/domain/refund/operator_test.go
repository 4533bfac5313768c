package refund_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"orderflow/internal/domain/refund"
	"orderflow/internal/infra/pay"
	"orderflow/internal/testenv"
	"orderflow/model"
)

// An operator's retry: only of a refund in manual; under the same number
// unless the provider said that number failed (it may still hold any other
// manual refund under it), under the next generation's number when it did;
// and an audit entry per retry.
func TestRetry(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	o := l.order(t, model.OrderFinished, 1000)
	r := l.mustOpen(t, o, refund.Request{Provider: pay.NamePaysim, TradeNo: "T-1", AmountCents: 1000, Reason: model.RefundReasonLate})
	base := r.BaseNo
	if _, err := l.svc.Retry(l.ctx, base); !errors.Is(err, refund.ErrNotManual) {
		t.Fatalf("retry of a processing refund: %v, want ErrNotManual", err)
	}
	// The one send allowed fails (nobody listens): manual, provider status unknown.
	if err := l.svc.Execute(l.ctx, base, 1); err == nil {
		t.Fatal("execute against a dead provider succeeded")
	}
	steps := []struct {
		name     string
		failedAt string // the number the provider declares failed first; "" none
		want     string
	}{
		{"manual after failed sends: the same number", "", base},
		{"the provider failed it: the next number", base, base + "-2"},
		{"failed again: the one after", base + "-2", base + "-3"},
	}
	for i, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.failedAt != "" {
				if err := l.svc.CallbackFrom(l.ctx, pay.NamePaysim, st.failedAt, pay.RefundFailed); err != nil {
					t.Fatal(err)
				}
			}
			if got := l.refund(t, base); got.Status != model.RefundManual {
				t.Fatalf("before the retry: %s", got.Status)
			}
			no, err := l.svc.Retry(l.ctx, l.refund(t, base).RefundNo)
			if err != nil || no != st.want {
				t.Fatalf("retry: %q, %v; want %q", no, err, st.want)
			}
			got := l.refund(t, base)
			if got.RefundNo != st.want || got.Status != model.RefundProcessing || got.TaskGen != i+2 || got.Attempts != 0 || got.ProviderStatus != "" {
				t.Errorf("after the retry: %s %s task_gen %d attempts %d provider %q; want %s processing task_gen %d, a clean slate",
					got.RefundNo, got.Status, got.TaskGen, got.Attempts, got.ProviderStatus, st.want, i+2)
			}
			if _, err := l.svc.Retry(l.ctx, no); !errors.Is(err, refund.ErrNotManual) {
				t.Errorf("a second retry: %v, want ErrNotManual", err)
			}
			if n := testenv.Count(t, l.DB, `SELECT COUNT(*) FROM audit_entries WHERE action = 'refund_retry'`); n != int64(i+1) {
				t.Errorf("%d retry audit entries, want %d", n, i+1)
			}
			if st.want != base {
				if _, err := l.svc.Get(l.ctx, st.failedAt); !errors.Is(err, refund.ErrNotFound) {
					t.Errorf("the failed number still finds the refund: %v", err)
				}
			}
		})
		if t.Failed() {
			return
		}
	}
}

// The refund of a manual payment (no provider took the money) goes to an
// operator on its first run with nothing sent, and cannot be retried —
// only resolved.
func TestManualMoney(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	o := l.order(t, model.OrderRefunding, 500)
	r := l.mustOpen(t, o, refund.Request{Provider: pay.NameManual, TradeNo: "BANK-1", AmountCents: 500,
		Reason: model.RefundReasonOperator, Key: "k", OfPayment: true})
	for range 2 { // a repeated task changes nothing
		if err := l.svc.Execute(l.ctx, r.RefundNo, 1); err != nil {
			t.Fatalf("execute: %v", err)
		}
	}
	got := l.refund(t, r.BaseNo)
	if got.Status != model.RefundManual || got.Attempts != 0 || got.LastError != refund.ManualMoney {
		t.Errorf("after execute: %s, %d attempts, last error %q; want manual, none sent, %q", got.Status, got.Attempts, got.LastError, refund.ManualMoney)
	}
	if n := testenv.Count(t, l.DB, `SELECT COUNT(*) FROM notifications WHERE kind = 'refund_manual'`); n != 1 {
		t.Errorf("%d admin alerts, want 1", n)
	}
	if _, err := l.svc.Retry(l.ctx, r.RefundNo); !errors.Is(err, refund.ErrManualMoney) {
		t.Errorf("retry: %v, want ErrManualMoney", err)
	}
	if got := l.refund(t, r.BaseNo); got.Status != model.RefundManual {
		t.Errorf("the refused retry moved it to %s", got.Status)
	}
	if err := l.svc.Resolve(l.ctx, r.RefundNo, "paid back by bank transfer"); err != nil {
		t.Fatalf("resolve: %v", err)
	}
	if row, _ := l.Store.OrderByID(l.ctx, o.ID); row.Status != model.OrderRefunded {
		t.Errorf("order %s after its only refund was resolved, want refunded", row.Status)
	}
}

// Resolve's note goes whole into the audit entry and, bounded to the
// history's 64 characters, into the move's reason.
func TestResolveNote(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	o := l.order(t, model.OrderFinished, 1000)
	const prefix = "operator resolved: "
	fits := strings.Repeat("é", refund.MaxNote)
	for i, c := range []struct {
		name, note, reason string
	}{
		{"no note", "  ", "operator resolved"},
		{"trimmed", "  by bank  ", prefix + "by bank"},
		{"exactly fits", fits, prefix + fits},
		{"one too many", fits + "x", prefix + fits[:len(fits)-len("é")] + "…"},
		{"far too long", strings.Repeat("n", 300), prefix + strings.Repeat("n", refund.MaxNote-1) + "…"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := l.mustOpen(t, o, refund.Request{Provider: pay.NamePaysim, TradeNo: "T-" + string(rune('a'+i)), AmountCents: 10, Reason: model.RefundReasonLate})
			if err := l.svc.Resolve(l.ctx, r.RefundNo, c.note); !errors.Is(err, refund.ErrNotManual) {
				t.Fatalf("resolve of a processing refund: %v, want ErrNotManual", err)
			}
			if err := l.svc.CallbackFrom(l.ctx, pay.NamePaysim, r.RefundNo, pay.RefundFailed); err != nil {
				t.Fatal(err)
			}
			if err := l.svc.Resolve(l.ctx, r.RefundNo, c.note); err != nil {
				t.Fatalf("resolve: %v", err)
			}
			evs, err := l.svc.History(l.ctx, r)
			if err != nil || len(evs) == 0 {
				t.Fatalf("history: %v, %v", evs, err)
			}
			last := evs[len(evs)-1]
			if last.ToStatus != "succeeded" || last.Reason != c.reason || utf8.RuneCountInString(last.Reason) > 64 {
				t.Errorf("last move to %s, reason %q; want succeeded, %q", last.ToStatus, last.Reason, c.reason)
			}
			if n := testenv.Count(t, l.DB, `SELECT COUNT(*) FROM audit_entries WHERE action = 'refund_resolve' AND object = ?`, r.RefundNo); n != 1 {
				t.Errorf("%d resolve audit entries, want 1", n)
			}
		})
	}
}

// A provider's refund notification applies only to a refund that provider
// was asked for (a refund opened before there were providers belongs to
// the simulator), and only with a status it knows.
func TestCallbackFromItsProvider(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	o := l.order(t, model.OrderFinished, 1000)
	r := l.mustOpen(t, o, refund.Request{Provider: pay.NameAlipay, TradeNo: "T-A", AmountCents: 100, Reason: model.RefundReasonLate})
	legacy := l.mustOpen(t, o, refund.Request{Provider: "", TradeNo: "T-OLD", AmountCents: 100, Reason: model.RefundReasonLate})
	for _, c := range []struct {
		name, provider, no, status string
		err                        error
	}{
		{"another provider's notification", pay.NamePaysim, r.RefundNo, pay.RefundSucceeded, refund.ErrNotFound},
		{"a number nobody opened", pay.NameAlipay, "RFnone", pay.RefundSucceeded, refund.ErrNotFound},
		{"a status nobody knows", pay.NameAlipay, r.RefundNo, "done", refund.ErrBadStatus},
		{"its own provider", pay.NameAlipay, r.RefundNo, pay.RefundSucceeded, nil},
		{"the simulator for a refund with no provider", pay.NamePaysim, legacy.RefundNo, pay.RefundSucceeded, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := l.svc.CallbackFrom(l.ctx, c.provider, c.no, c.status); !errors.Is(err, c.err) {
				t.Errorf("callback: %v, want %v", err, c.err)
			}
		})
	}
	if n := testenv.Count(t, l.DB, `SELECT COUNT(*) FROM refunds WHERE status = 'succeeded'`); n != 2 {
		t.Errorf("%d refunds succeeded, want 2", n)
	}
}
