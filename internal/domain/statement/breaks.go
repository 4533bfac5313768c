package statement

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"orderflow/internal/domain/trail"
	"orderflow/internal/infra/operators"
	"orderflow/model"

	"go.uber.org/zap"
)

// actionResolve is the trail's action of an operator's resolve.
const actionResolve = "statement_break_resolve"

// list records b once per (provider, kind, ref), with the admin's alert
// and the shop's statement.break webhook, in one transaction.
func (m *matcher) list(ctx context.Context, b *model.StatementBreak) error {
	return m.s.store.InTx(ctx, func(tx *model.Store) error { return m.listIn(ctx, tx, b) })
}

// listIn is list inside the caller's transaction.
func (m *matcher) listIn(ctx context.Context, tx *model.Store, b *model.StatementBreak) error {
	b.CreatedAt = m.s.clock.Now()
	fresh, err := tx.InsertStatementBreak(ctx, b)
	if err != nil || !fresh {
		return err
	}
	m.breaks++
	m.log.Warn("statement break listed", zap.String("kind", b.Kind), zap.String("ref", b.Ref), zap.String("order_no", b.OrderNo),
		zap.String("trade_no", b.TradeNo), zap.String("action", b.Action))
	return tx.InsertNotification(ctx, &model.Notification{
		NotifyID: "statement-break:" + b.Provider + ":" + b.Kind + ":" + b.Ref, Kind: NotifyBreak, Recipient: "admin", CreatedAt: b.CreatedAt,
		Subject: fmt.Sprintf("Statement break %s: %s %s", b.Kind, b.Provider, b.Ref),
		Message: fmt.Sprintf("%s statement of %s: %s %s (order %s, trade %s, provider %s cents, ledger %s cents); %s",
			b.Provider, b.Day, b.Kind, b.Ref, b.OrderNo, b.TradeNo, cents(b.ProviderAmountCents), cents(b.LedgerAmountCents), b.Action),
	})
}

// setAction records what the system did about an open break.
func (m *matcher) setAction(ctx context.Context, b *model.StatementBreak, action string) error {
	cur, err := m.s.store.StatementBreakByRef(ctx, b.Provider, b.Kind, b.Ref)
	if err != nil {
		return fmt.Errorf("break %s %s: %w", b.Kind, b.Ref, err)
	}
	return m.s.store.SetBreakAction(ctx, cur.ID, action)
}

// resolve resolves b as the system, with what it did.
func (m *matcher) resolve(ctx context.Context, b *model.StatementBreak, action string) error {
	cur, err := m.s.store.StatementBreakByRef(ctx, b.Provider, b.Kind, b.Ref)
	if err != nil {
		return fmt.Errorf("break %s %s: %w", b.Kind, b.Ref, err)
	}
	if _, err := m.s.store.ResolveStatementBreak(ctx, cur.ID, model.BreakResolution{By: ResolvedBySystem, Action: action, At: m.s.clock.Now()}); err != nil {
		return fmt.Errorf("resolve break %d: %w", cur.ID, err)
	}
	m.log.Info("statement break resolved by the system", zap.String("kind", b.Kind), zap.String("ref", b.Ref), zap.String("action", action))
	return nil
}

// missingPage is how many ledger rows the missing pass reads at once.
const missingPage = 500

// missing lists what the ledger holds for the day that no statement
// listed: payments by the provider's time, refunds by when they succeeded.
func (m *matcher) missing(ctx context.Context, from, to time.Time) error {
	payments := func(after int64) ([]model.Payment, error) {
		return m.s.store.UnstatedPayments(ctx, m.run.Provider, from, to, after, missingPage)
	}
	err := eachPaged("unstated payments", payments, func(p *model.Payment) int64 { return p.ID }, func(p *model.Payment) error {
		o, err := m.s.store.OrderByID(ctx, p.OrderID)
		if err != nil {
			return fmt.Errorf("order of unstated payment %s: %w", p.TradeNo, err)
		}
		amount := p.AmountCents
		return m.list(ctx, &model.StatementBreak{Provider: m.run.Provider, Day: m.run.Day, Kind: BreakMissingPayment, Ref: p.TradeNo,
			TradeNo: p.TradeNo, OrderNo: o.OrderNo, LedgerAmountCents: &amount, RunID: m.run.ID,
			Action: "none: a later statement that lists it resolves it; else ask the provider about the trade"})
	})
	if err != nil {
		return err
	}
	refunds := func(after int64) ([]model.Refund, error) {
		return m.s.store.UnstatedRefunds(ctx, m.run.Provider, from, to, after, missingPage)
	}
	return eachPaged("unstated refunds", refunds, func(r *model.Refund) int64 { return r.ID }, func(r *model.Refund) error {
		amount := r.AmountCents
		return m.list(ctx, &model.StatementBreak{Provider: m.run.Provider, Day: m.run.Day, Kind: BreakMissingRefund, Ref: r.BaseNo,
			TradeNo: r.TradeNo, OrderNo: r.OrderNo, RefundNo: r.RefundNo, LedgerAmountCents: &amount, RunID: m.run.ID,
			Action: "none: a later statement that lists it resolves it; else ask the provider about the refund"})
	})
}

// eachPaged walks the rows read reads (what, in its error), missingPage
// at a time after the last row's id, and hands each to each; a short page
// is the last.
func eachPaged[T any](what string, read func(after int64) ([]T, error), id func(*T) int64, each func(*T) error) error {
	for after := int64(0); ; {
		rows, err := read(after)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		for i := range rows {
			after = id(&rows[i])
			if err := each(&rows[i]); err != nil {
				return err
			}
		}
		if len(rows) < missingPage {
			return nil
		}
	}
}

// settle resolves the provider's open breaks the ledger now holds: an
// unknown payment the payment path recorded, a payment or refund a later
// statement listed.
func (m *matcher) settle(ctx context.Context) error {
	for _, kind := range []string{BreakUnknownPayment, BreakMissingPayment, BreakMissingRefund} {
		open := func(after int64) ([]model.StatementBreak, error) {
			return m.s.store.OpenBreaksOf(ctx, m.run.Provider, kind, after, missingPage)
		}
		err := eachPaged("open "+kind+" breaks", open, func(b *model.StatementBreak) int64 { return b.ID }, func(b *model.StatementBreak) error {
			action, err := m.heldNow(ctx, b)
			if err != nil || action == "" {
				return err
			}
			return m.resolve(ctx, b, action)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// heldNow says how the ledger or a statement now accounts for an open
// break, or "" when nothing does yet.
func (m *matcher) heldNow(ctx context.Context, b *model.StatementBreak) (string, error) {
	var stated *string
	switch b.Kind {
	case BreakUnknownPayment, BreakMissingPayment:
		p, err := m.s.store.PaymentByTrade(ctx, b.Provider, b.TradeNo)
		if errors.Is(err, model.ErrNotFound) {
			return "", nil
		}
		if err != nil {
			return "", fmt.Errorf("payment of break %d: %w", b.ID, err)
		}
		if b.Kind == BreakUnknownPayment {
			return "the ledger now holds the payment (disposition " + p.Disposition.String() + ")", nil
		}
		stated = p.StatedOn
	case BreakMissingRefund:
		r, err := m.s.store.RefundByBaseNo(ctx, b.Ref)
		if err != nil {
			return "", fmt.Errorf("refund of break %d: %w", b.ID, err)
		}
		stated = r.StatedOn
	}
	if stated == nil {
		return "", nil
	}
	return "listed by the statement of " + *stated, nil
}

// Resolve is an operator's resolve of an open break, with a note, audited
// in the same transaction.
func (s *Service) Resolve(ctx context.Context, id int64, note string) (*model.StatementBreak, error) {
	by := "operator"
	if op, ok := operators.FromContext(ctx); ok {
		by = op.Name
	}
	if !utf8.ValidString(note) || len(note) > 512 {
		return nil, ErrInvalidNote
	}
	now := s.clock.Now()
	err := s.store.InTx(ctx, func(tx *model.Store) error {
		b, err := tx.StatementBreakByID(ctx, id)
		if errors.Is(err, model.ErrNotFound) {
			return ErrBreakNotFound
		}
		if err != nil {
			return err
		}
		moved, err := tx.ResolveStatementBreak(ctx, id, model.BreakResolution{By: by, Note: note, At: now})
		if err != nil {
			return err
		}
		if !moved {
			return ErrBreakResolved
		}
		return trail.Record(ctx, tx, now, actionResolve, "break:"+strconv.FormatInt(id, 10),
			trail.Detail{"kind": b.Kind, "provider": b.Provider, "ref": b.Ref, "note": note})
	})
	if errors.Is(err, ErrBreakNotFound) || errors.Is(err, ErrBreakResolved) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("resolve statement break %d: %w", id, err)
	}
	b, err := s.store.StatementBreakByID(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("statement break %d: %w", id, err)
	}
	s.log.Info("statement break resolved by an operator", zap.Int64("break_id", id), zap.String("by", by), zap.String("kind", b.Kind))
	return b, nil
}

// MaxList is the most breaks a list answers.
const MaxList = 500

// Breaks lists breaks in a status ("" for all) of a provider ("" for all).
func (s *Service) Breaks(ctx context.Context, status, provider string) ([]model.StatementBreak, error) {
	st := model.BreakStatus(status)
	if status != "" && st != model.BreakOpen && st != model.BreakResolved {
		return nil, ErrInvalidStatus
	}
	out, err := s.store.StatementBreaks(ctx, st, provider, MaxList)
	if err != nil {
		return nil, fmt.Errorf("statement breaks: %w", err)
	}
	return out, nil
}

// cents writes an optional amount.
func cents(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}
