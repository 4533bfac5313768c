package statement

import (
	"context"
	"fmt"

	"orderflow/internal/infra/pay"
	"orderflow/model"

	"go.uber.org/zap"
)

// matcher is one try of one run: it reads the day's lines page by page
// and matches each page with the ledger in a few queries, then looks for
// what the ledger holds and the statement did not list.
type matcher struct {
	s      *Service
	run    *model.StatementRun
	log    *zap.Logger
	t      model.StatementTotals
	breaks int64 // breaks this try listed first
}

// day reads and matches the whole day and returns the statement's totals.
func (m *matcher) day(ctx context.Context, src pay.Statements) (model.StatementTotals, error) {
	from, to, err := window(m.run.Day, src.StatementZone())
	if err != nil {
		return m.t, err
	}
	if err := src.Statement(ctx, m.run.Day, func(page []pay.StatementLine) error { return m.page(ctx, page) }); err != nil {
		return m.t, fmt.Errorf("read statement: %w", err)
	}
	if err := m.missing(ctx, from, to); err != nil {
		return m.t, err
	}
	if err := m.settle(ctx); err != nil {
		return m.t, err
	}
	return m.t, nil
}

// page matches one page of lines.
func (m *matcher) page(ctx context.Context, lines []pay.StatementLine) error {
	var payments, numbered, theirs, disputes []pay.StatementLine
	for _, l := range lines {
		m.t.ProviderLines++
		m.t.FeesCents += l.FeeCents
		switch l.Kind {
		case pay.LinePayment:
			m.t.Payments++
			m.t.GrossCents += l.AmountCents
			payments = append(payments, l)
		case pay.LineRefund:
			m.t.Refunds++
			m.t.RefundsCents += l.AmountCents
			if l.RefundNo != "" {
				numbered = append(numbered, l)
			} else {
				theirs = append(theirs, l)
			}
		case pay.LineDispute:
			m.t.DisputesCents += l.AmountCents
			disputes = append(disputes, l)
		default:
			m.log.Warn("statement line of an unknown kind; counted, not matched", zap.String("kind", l.Kind), zap.String("ref", l.Ref))
		}
	}
	if err := m.payments(ctx, payments); err != nil {
		return err
	}
	if err := m.numberedRefunds(ctx, numbered); err != nil {
		return err
	}
	if err := m.theirRefunds(ctx, theirs); err != nil {
		return err
	}
	return m.disputes(ctx, disputes)
}

// payments matches payment lines by trade number.
func (m *matcher) payments(ctx context.Context, lines []pay.StatementLine) error {
	known, err := m.s.store.PaymentsByTrades(ctx, m.run.Provider, keys(lines, func(l pay.StatementLine) string { return l.TradeNo }))
	if err != nil {
		return fmt.Errorf("payments of page: %w", err)
	}
	byTrade := byKey(known, func(p *model.Payment) string { return p.TradeNo })
	var stated []int64
	for _, l := range lines {
		p, ok := byTrade[l.TradeNo]
		if !ok {
			if err := m.unknownPayment(ctx, l); err != nil {
				return err
			}
			continue
		}
		stated = append(stated, p.ID)
		if p.AmountCents != l.AmountCents {
			if err := m.mismatch(ctx, l, l.TradeNo, "", p.AmountCents); err != nil {
				return err
			}
			continue
		}
		m.t.Matched++
	}
	return m.s.store.MarkStated(ctx, model.StatedPayments, stated, m.run.Day)
}

// numberedRefunds matches refund lines that carry a merchant refund
// number with the refunds orderflow sent under it; a number the ledger
// never sent is a refund made elsewhere (theirRefunds).
func (m *matcher) numberedRefunds(ctx context.Context, lines []pay.StatementLine) error {
	known, err := m.s.store.RefundsByNos(ctx, m.run.Provider, keys(lines, func(l pay.StatementLine) string { return l.RefundNo }))
	if err != nil {
		return fmt.Errorf("refunds of page: %w", err)
	}
	byNo := make(map[string]*model.Refund, 2*len(known))
	for i := range known {
		byNo[known[i].RefundNo], byNo[known[i].BaseNo] = &known[i], &known[i]
	}
	var stated []int64
	var unknown []pay.StatementLine
	for _, l := range lines {
		r, ok := byNo[l.RefundNo]
		switch {
		case !ok:
			// A number the ledger never sent: money returned that
			// orderflow never asked for (a dashboard refund).
			unknown = append(unknown, l)
		case r.AmountCents != l.AmountCents:
			stated = append(stated, r.ID)
			err = m.mismatch(ctx, l, r.BaseNo, r.RefundNo, r.AmountCents)
		default:
			stated = append(stated, r.ID)
			m.t.Matched++
		}
		if err != nil {
			return err
		}
	}
	if err := m.s.store.MarkStated(ctx, model.StatedRefunds, stated, m.run.Day); err != nil {
		return err
	}
	return m.theirRefunds(ctx, unknown)
}

// disputes matches chargebacks by the provider's dispute id.
func (m *matcher) disputes(ctx context.Context, lines []pay.StatementLine) error {
	known, err := m.s.store.DisputesByIDs(ctx, m.run.Provider, keys(lines, func(l pay.StatementLine) string { return l.Ref }))
	if err != nil {
		return fmt.Errorf("disputes of page: %w", err)
	}
	byID := byKey(known, func(d *model.Dispute) string { return d.DisputeID })
	var stated []int64
	for _, l := range lines {
		d, ok := byID[l.Ref]
		if !ok {
			if err := m.list(ctx, m.newBreak(BreakUnknownRefund, l.Ref, l, nil,
				"not recorded: a chargeback orderflow was never told of; see the dispute in the provider's dashboard")); err != nil {
				return err
			}
			continue
		}
		stated = append(stated, d.ID)
		m.t.Matched++
	}
	return m.s.store.MarkStated(ctx, model.StatedDisputes, stated, m.run.Day)
}

// mismatch lists a line whose amount differs from the ledger's.
func (m *matcher) mismatch(ctx context.Context, l pay.StatementLine, ref, refundNo string, ledger int64) error {
	b := m.newBreak(BreakAmountMismatch, ref, l, &ledger, "none: compare the amounts with the provider's dashboard")
	b.RefundNo = refundNo
	return m.list(ctx, b)
}

// newBreak is the break of line l, open.
func (m *matcher) newBreak(kind, ref string, l pay.StatementLine, ledger *int64, action string) *model.StatementBreak {
	amount := l.AmountCents
	return &model.StatementBreak{
		Provider: m.run.Provider, Day: m.run.Day, Kind: kind, Ref: ref, TradeNo: l.TradeNo, OrderNo: l.OrderNo,
		RefundNo: l.RefundNo, ProviderAmountCents: &amount, LedgerAmountCents: ledger, Action: action, RunID: m.run.ID,
	}
}

// byKey indexes rows by key; a key held by two rows keeps the last.
func byKey[T any](rows []T, key func(*T) string) map[string]*T {
	out := make(map[string]*T, len(rows))
	for i := range rows {
		out[key(&rows[i])] = &rows[i]
	}
	return out
}

// keys lists the distinct non-empty keys of lines.
func keys(lines []pay.StatementLine, key func(pay.StatementLine) string) []string {
	seen := make(map[string]bool, len(lines))
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if k := key(l); k != "" && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
