package order

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/domain/bounds"
	"orderflow/internal/domain/refund"
	"orderflow/internal/domain/trail"
	"orderflow/model"

	"go.uber.org/zap"
)

// MaxRefundReason is the longest reason an operator may give a refund, in
// characters (refunds.note is VARCHAR(255)).
const MaxRefundReason = 255

// Errors of an operator's refund of part of an order.
var (
	ErrNotPaid         = apperr.New(apperr.Conflict, "order_not_paid", "this order was never paid: there is nothing to refund")
	ErrBadRefundReason = apperr.New(apperr.Invalid, "invalid_reason",
		"reason must be valid UTF-8 of at most 255 characters")
	ErrRefundKeyReused = apperr.New(apperr.Unprocessable, "idempotency_key_reused",
		"this Idempotency-Key was used for another refund of this order (amount_cents or reason differ); use a new key")
)

// RefundRequest is an operator's refund of an order's payment, whole or in
// part. Key (the request's Idempotency-Key, required) decides "the same
// refund": asked again, the first one is answered.
type RefundRequest struct {
	AmountCents int64
	Reason      string
	Key         string
}

// Refund returns amount of the order's payment through the provider that
// took it, under its own refund_no, through the one refund path (backoff,
// query before re-send, manual after exhaustion). The order keeps its
// status. The order's refunds never add up to more than it was paid: the
// ledger's conditional UPDATE holds that (refund.ErrExceedsPayment). It
// returns the refund, the one a request with the same key opened when
// there was one.
func (s *Service) Refund(ctx context.Context, orderNo string, req RefundRequest) (*model.Refund, error) {
	if err := checkRefund(req); err != nil {
		return nil, err
	}
	o, err := s.load(ctx, orderNo)
	if err != nil {
		return nil, err
	}
	if r, err := s.store.RefundByBaseNo(ctx, refund.OperatorNumber(o.OrderNo, req.Key)); err == nil {
		return sameRefund(r, req)
	} else if !errors.Is(err, model.ErrNotFound) {
		return nil, fmt.Errorf("refund order %s: %w", orderNo, err)
	}
	if !paid(o) {
		return nil, ErrNotPaid
	}
	provider, err := s.paidThrough(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("refund order %s: %w", orderNo, err)
	}
	now := s.clock.Now()
	var r *model.Refund
	var fresh bool
	err = s.store.InTx(ctx, func(tx *model.Store) (err error) {
		r, fresh, err = refund.Open(ctx, tx, o, refund.Request{Provider: provider, TradeNo: *o.TradeNo,
			AmountCents: req.AmountCents, TradeCents: o.AmountCents, Reason: model.RefundReasonOperator,
			Key: req.Key, Note: req.Reason, OfPayment: true}, now)
		if err != nil || !fresh {
			return err
		}
		return trail.Record(ctx, tx, now, trail.OrderRefund, o.OrderNo, trail.Detail{
			"status": o.Status.String(), "amount_cents": r.AmountCents, "refund_no": r.RefundNo, "reason": req.Reason,
		})
	})
	if err != nil {
		return nil, fmt.Errorf("refund order %s: %w", orderNo, err)
	}
	if !fresh { // the same key at once: the other request opened it
		return sameRefund(r, req)
	}
	s.log.Info("operator refund opened", zap.String("order_no", o.OrderNo), zap.String("refund_no", r.RefundNo),
		zap.Int64("amount_cents", r.AmountCents), zap.String("provider", provider))
	return r, nil
}

// checkRefund refuses a malformed request before anything is read.
func checkRefund(req RefundRequest) error {
	if !ValidIdempotencyKey(req.Key) {
		return ErrBadIdempotencyKey
	}
	if err := bounds.CheckAmount(req.AmountCents, 1); err != nil {
		return err
	}
	if !utf8.ValidString(req.Reason) || utf8.RuneCountInString(req.Reason) > MaxRefundReason {
		return ErrBadRefundReason
	}
	return nil
}

// paid: the order's payment was applied (a trade moved it to paid), so
// there is money of its own to return. A pending or closed order's late
// trades are refunded automatically, whole.
func paid(o *model.Order) bool {
	return o.TradeNo != nil && o.Status != model.OrderPending && o.Status != model.OrderClosed
}

// sameRefund answers a repeated request with the refund its key opened,
// unless it asks for something else.
func sameRefund(r *model.Refund, req RefundRequest) (*model.Refund, error) {
	if r.AmountCents != req.AmountCents || r.Note != req.Reason {
		return nil, ErrRefundKeyReused
	}
	return r, nil
}
