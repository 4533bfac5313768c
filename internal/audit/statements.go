package audit

import (
	"database/sql"
	"fmt"

	"orderflow/model"
)

// RuleStatementBreaks: after a run that reconciled its providers'
// statements, every break listed is one the run planted on purpose
// (Options.Planted) — an unplanted one, open or resolved, is money the
// ledger and the provider disagree about — and every planted difference is
// listed exactly once, of its kind, standing as planned (open, or resolved
// by the system); a planted unknown payment the system refunded was
// refunded exactly once, for its whole amount. Needs Options.Planted.
const RuleStatementBreaks = "statement-breaks"

// PlantedBreak is a difference a run put into a provider's statement on
// purpose, and the break it must find.
type PlantedBreak struct {
	// What is a short description for the report ("dropped line").
	What     string
	Provider string
	Kind     string // statement.Break*
	// TradeNo and OrderNo identify the break: it carries both (an empty
	// one matches any).
	TradeNo, OrderNo string
	// Status is how the break must stand: model.BreakOpen, or
	// model.BreakResolved by the system.
	Status model.BreakStatus
	// RefundedOnce: the payment of TradeNo went back to the buyer by
	// exactly one succeeded refund of its whole amount, and no other.
	RefundedOnce bool
}

// String names the planted break in a report line.
func (p PlantedBreak) String() string {
	return fmt.Sprintf("%s (%s %s, order %s, trade %s)", p.What, p.Provider, p.Kind, p.OrderNo, p.TradeNo)
}

// matches reports whether b is the break p plants.
func (p PlantedBreak) matches(b *statementBreak) bool {
	return b.Provider == p.Provider && b.Kind == p.Kind &&
		(p.TradeNo == "" || b.TradeNo == p.TradeNo) && (p.OrderNo == "" || b.OrderNo == p.OrderNo)
}

type statementBreak struct {
	Provider, Day, Kind, Ref   string
	TradeNo, OrderNo, RefundNo string
	ProviderCents, LedgerCents sql.NullInt64
	Status                     model.BreakStatus
	Action, ResolvedBy         string
}

// String describes a break with everything an operator needs to find it.
func (b *statementBreak) String() string {
	cents := func(v sql.NullInt64) string {
		if !v.Valid {
			return "-"
		}
		return fmt.Sprint(v.Int64)
	}
	s := fmt.Sprintf("%s %s break %s of %s: order %s, trade %s", b.Status, b.Kind, b.Ref, b.Provider+" "+b.Day, b.OrderNo, b.TradeNo)
	if b.RefundNo != "" {
		s += ", refund " + b.RefundNo
	}
	s += fmt.Sprintf(", provider %s cents, ledger %s cents; action: %s", cents(b.ProviderCents), cents(b.LedgerCents), b.Action)
	if b.ResolvedBy != "" {
		s += "; resolved by " + b.ResolvedBy
	}
	return s
}

// statementBreaks applies RuleStatementBreaks.
func (a *auditor) statementBreaks(c *collector) {
	planted := a.opt.Planted
	found := make([]int, len(planted))
	for i := range a.l.breaks {
		b := &a.l.breaks[i]
		c.check()
		at := -1
		for j, p := range planted {
			if p.matches(b) {
				at = j
				break
			}
		}
		if at < 0 {
			c.violation("not planted: %s", b)
			continue
		}
		found[at]++
		p := planted[at]
		switch {
		case found[at] > 1:
			c.violation("planted %s listed again: %s", p, b)
		case b.Status != p.Status:
			c.violation("planted %s is %s, want %s: %s", p, b.Status, p.Status, b)
		case p.Status == model.BreakResolved && b.ResolvedBy != "system":
			c.violation("planted %s resolved by %q, want the system: %s", p, b.ResolvedBy, b)
		}
	}
	for j, p := range planted {
		c.check()
		if found[j] == 0 {
			c.violation("planted %s never listed", p)
		}
		if p.RefundedOnce {
			a.refundedOnce(c, p)
		}
	}
}

// refundedOnce checks that the payment of p's trade went back exactly once.
func (a *auditor) refundedOnce(c *collector, p PlantedBreak) {
	var paid int64 = -1
	for _, pm := range a.l.payments {
		if pm.TradeNo == p.TradeNo {
			paid = pm.AmountCents
		}
	}
	if paid < 0 {
		c.violation("planted %s: the ledger holds no payment of its trade", p)
		return
	}
	var succeeded []string
	var others int
	for _, r := range a.l.refunds {
		if r.TradeNo != p.TradeNo {
			continue
		}
		if r.Status == model.RefundSucceeded && r.AmountCents == paid {
			succeeded = append(succeeded, r.RefundNo)
		} else {
			others++
		}
	}
	if len(succeeded) != 1 || others != 0 {
		c.violation("planted %s: its payment of %d cents went back by %d succeeded refund(s) %v and %d other(s), want exactly one",
			p, paid, len(succeeded), succeeded, others)
	}
}
