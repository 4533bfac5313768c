package statement

import (
	"context"
	"errors"
	"fmt"

	"orderflow/internal/infra/pay"
	"orderflow/model"

	"go.uber.org/zap"
)

// ErrNotAProviderRefund is a refund event RefundSeen cannot record: it
// names no provider id, no trade or no amount.
var ErrNotAProviderRefund = errors.New("refund event names no provider refund")

// RefundSeen records a refund the provider reported in an event (its
// notification) that orderflow never asked for — one made in the provider's
// dashboard — exactly as a statement line of it would be: against its
// payment, counted in the order's refunded_cents, and listed once as an
// unknown_refund break (provider, kind and the provider's id are its key,
// so the statement that lists it later changes nothing). l.At decides the
// break's day; zero: today in the provider's calendar.
func (s *Service) RefundSeen(ctx context.Context, provider string, l pay.StatementLine) error {
	if l.Ref == "" || l.TradeNo == "" || len(l.Ref) > 64 || len(l.TradeNo) > 64 || l.AmountCents <= 0 {
		return ErrNotAProviderRefund
	}
	l.Kind, l.RefundNo = pay.LineRefund, ""
	at := l.At
	if at.IsZero() {
		at = s.clock.Now()
	}
	day := at.UTC().Format(dayLayout)
	if src, ok := s.source(provider); ok {
		day = at.In(src.StatementZone()).Format(dayLayout)
	}
	// No run found it: the break's run_id is 0.
	m := &matcher{s: s, run: &model.StatementRun{Provider: provider, Day: day}, log: s.log.With(zap.String("provider", provider),
		zap.String("ref", l.Ref), zap.String("learned_from", "provider event"))}
	known, err := s.store.RefundsByProviderRefs(ctx, provider, []string{l.Ref})
	if err != nil {
		return fmt.Errorf("provider refund %s: %w", l.Ref, err)
	}
	if len(known) > 0 {
		return nil // recorded before (a repeat, or the statement came first)
	}
	return m.recordTheirRefund(ctx, l)
}
