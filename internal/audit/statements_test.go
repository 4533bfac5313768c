package audit

import (
	"database/sql"
	"strings"
	"testing"

	"orderflow/model"
)

// The statement rule on hand-built ledgers: what a chaos run planted is
// found once and stands as planned; anything else is named.
func TestStatementBreaks(t *testing.T) {
	open := func(kind, order, trade string) statementBreak {
		return statementBreak{Provider: "paysim", Day: "2026-12-04", Kind: kind, Ref: trade, TradeNo: trade, OrderNo: order,
			ProviderCents: sql.NullInt64{Int64: 500, Valid: true}, Status: model.BreakOpen, Action: "none"}
	}
	resolved := func(b statementBreak) statementBreak {
		b.Status, b.ResolvedBy = model.BreakResolved, "system"
		return b
	}
	planted := []PlantedBreak{
		{What: "dropped line", Provider: "paysim", Kind: "missing_payment", TradeNo: "T1", OrderNo: "O1", Status: model.BreakOpen},
		{What: "unseen payment of a closed order", Provider: "paysim", Kind: "unknown_payment", TradeNo: "T2", OrderNo: "O2",
			Status: model.BreakResolved, RefundedOnce: true},
	}
	payments := []payment{{TradeNo: "T1", OrderID: 1, AmountCents: 500, Disposition: model.PaymentApplied},
		{TradeNo: "T2", OrderID: 2, AmountCents: 500, Disposition: model.PaymentLate}}
	lateRefund := refund{RefundNo: "RF2", BaseNo: "RF2", OrderID: 2, OrderNo: "O2", TradeNo: "T2", AmountCents: 500, Reason: "late",
		Status: model.RefundSucceeded}
	good := []statementBreak{open("missing_payment", "O1", "T1"), resolved(open("unknown_payment", "O2", "T2"))}

	for _, tc := range []struct {
		name    string
		breaks  []statementBreak
		refunds []refund
		planted []PlantedBreak
		want    []string // one substring per violation
	}{
		{name: "as planted", breaks: good, refunds: []refund{lateRefund}, planted: planted},
		{name: "nothing planted, nothing listed", planted: []PlantedBreak{}},
		{name: "an open break nobody planted", breaks: append(good[:2:2], open("unknown_payment", "O9", "T9")), refunds: []refund{lateRefund},
			planted: planted, want: []string{"not planted: open unknown_payment break T9"}},
		{name: "a resolved break nobody planted", breaks: append(good[:2:2], resolved(open("unknown_payment", "O9", "T9"))),
			refunds: []refund{lateRefund}, planted: planted, want: []string{"not planted: resolved unknown_payment break T9"}},
		{name: "a planted difference never listed", breaks: good[1:], refunds: []refund{lateRefund}, planted: planted,
			want: []string{"planted dropped line (paysim missing_payment, order O1, trade T1) never listed"}},
		{name: "listed twice", breaks: append(good[:2:2], func() statementBreak { b := open("missing_payment", "O1", "T1"); b.Ref = "T1b"; return b }()),
			refunds: []refund{lateRefund}, planted: planted, want: []string{"listed again"}},
		{name: "of another kind", breaks: []statementBreak{open("amount_mismatch", "O1", "T1"), good[1]}, refunds: []refund{lateRefund},
			planted: planted, want: []string{"not planted: open amount_mismatch", "dropped line (paysim missing_payment, order O1, trade T1) never listed"}},
		{name: "left open when the system should have resolved it", breaks: []statementBreak{good[0], open("unknown_payment", "O2", "T2")},
			refunds: []refund{lateRefund}, planted: planted, want: []string{"is open, want resolved"}},
		{name: "resolved by an operator", breaks: []statementBreak{good[0], func() statementBreak { b := good[1]; b.ResolvedBy = "alice"; return b }()},
			refunds: []refund{lateRefund}, planted: planted, want: []string{`resolved by "alice"`}},
		{name: "refunded twice", breaks: good, refunds: []refund{lateRefund, func() refund { r := lateRefund; r.RefundNo = "RF2-2"; return r }()},
			planted: planted, want: []string{"2 succeeded refund(s)"}},
		{name: "never refunded", breaks: good, planted: planted, want: []string{"0 succeeded refund(s)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &auditor{opt: Options{Planted: tc.planted}, l: &ledger{breaks: tc.breaks, payments: payments, refunds: tc.refunds}}
			res := Result{Rule: RuleStatementBreaks}
			a.statementBreaks(&collector{res: &res})
			if res.Violations != len(tc.want) {
				t.Fatalf("%d violations %q, want %d", res.Violations, res.Examples, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(res.Examples[i], w) {
					t.Errorf("violation %d is %q, want it to say %q", i, res.Examples[i], w)
				}
			}
			if want := len(tc.breaks) + len(tc.planted); res.Checked != want {
				t.Errorf("checked %d, want %d (every break and every planted difference)", res.Checked, want)
			}
		})
	}
	if r := skipReason(RuleStatementBreaks, Options{}); r == "" {
		t.Error("the rule runs without a planted set; want it skipped")
	}
}
