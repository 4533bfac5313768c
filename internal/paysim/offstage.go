package paysim

import (
	"errors"
	"fmt"

	"go.uber.org/zap"
)

// Money that moves without orderflow hearing of it: what the statement is
// there to find.

// Errors of DashboardRefund and PayUnseen.
var (
	// ErrNoPayment is a dashboard refund of an order the simulator took no
	// payment for.
	ErrNoPayment = errors.New("the simulator took no payment for this order")
	// ErrRefundExceedsTrade is a refund that would return more than the
	// trade paid.
	ErrRefundExceedsTrade = errors.New("the trade's refunds would add up to more than it paid")
	// ErrInvalid is an order number or amount the simulator refuses.
	ErrInvalid = errors.New("invalid order number or amount")
)

// DashboardRefund refunds cents of the order's latest payment the way an
// operator does in the provider's dashboard: the trade counts it (later
// refunds cannot pass the rest), the statement lists it without an
// orderflow refund number, and orderflow is not told. It returns the
// refund's id (DR + 20 hex digits), the line's Ref.
func (s *Sim) DashboardRefund(orderNo string, cents int64) (string, error) {
	if orderNo == "" || cents <= 0 {
		return "", fmt.Errorf("dashboard refund of %q for %d cents: %w", orderNo, cents, ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.payments[orderNo]
	if !ok {
		return "", fmt.Errorf("dashboard refund of %s: %w", orderNo, ErrNoPayment)
	}
	t := s.trades[n.TradeNo]
	if s.refundedLocked(n.TradeNo)+cents > t.amountCents {
		return "", fmt.Errorf("dashboard refund of %s for %d cents: %w", orderNo, cents, ErrRefundExceedsTrade)
	}
	t.dashboardCents += cents
	ref := "DR" + newTradeNo()[1:]
	s.book.add(StatementLine{
		Kind: KindRefund, TradeNo: n.TradeNo, OrderNo: orderNo, Ref: ref,
		AmountCents: cents, At: s.nowLocked(),
	})
	s.log.Info("paysim: dashboard refund", zap.String("order_no", orderNo), zap.String("ref", ref), zap.Int64("amount_cents", cents))
	return ref, nil
}

// PayUnseen takes the buyer's money for the order without telling
// orderflow (a notification lost for good): the payment is recorded — a
// later payment query finds it, the statement lists it — whatever orderflow
// thinks of the order. It returns the new trade number.
func (s *Sim) PayUnseen(orderNo string, cents int64) (string, error) {
	if orderNo == "" || cents <= 0 {
		return "", fmt.Errorf("unseen payment of %q for %d cents: %w", orderNo, cents, ErrInvalid)
	}
	tradeNo := newTradeNo()
	s.recordPayment(orderNo, tradeNo, cents)
	s.log.Info("paysim: payment taken unseen", zap.String("order_no", orderNo), zap.String("trade_no", tradeNo), zap.Int64("amount_cents", cents))
	return tradeNo, nil
}
