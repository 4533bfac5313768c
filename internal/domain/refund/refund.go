// Package refund returns money: one refund per (order, trade), sent to the
// provider with out_request_no = refund_no, asked about until final, and
// handed to an operator (manual) when it cannot be finished automatically.
package refund

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/metrics"
	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/tasks"
	"orderflow/model"

	"go.uber.org/zap"
)

// Settings are the refund knobs.
type Settings struct {
	MaxAttempts int           // failed provider attempts before manual
	AlertAfter  time.Duration // a refund processing longer than this is alerted
}

// Service runs the refund use cases.
type Service struct {
	store   *model.Store
	pay     *pay.Registry
	clock   clock.Clock
	log     *zap.Logger
	metrics *metrics.Metrics
	set     Settings
}

// Deps are what the service needs.
type Deps struct {
	Store   *model.Store
	Pay     *pay.Registry // the enabled providers; a refund goes through the one that took the money
	Clock   clock.Clock
	Log     *zap.Logger
	Metrics *metrics.Metrics
}

// New returns the refund service.
func New(d Deps, s Settings) *Service {
	return &Service{store: d.Store, pay: d.Pay, clock: d.Clock, log: d.Log, metrics: d.Metrics, set: s}
}

// Errors.
var (
	ErrNotFound    = apperr.New(apperr.NotFound, "refund_not_found", "no such refund")
	ErrNotManual   = apperr.New(apperr.Conflict, "invalid_status", "only a refund in manual can be retried or resolved")
	ErrManualMoney = apperr.New(apperr.Conflict, "manual_payment", "this refund returns a manual payment, which no provider holds: return the money by hand, then resolve it")
	ErrBadStatus   = apperr.New(apperr.Invalid, "invalid_status", "status must be succeeded, failed or processing")
	errStillPaying = errors.New("provider still processing the refund; asking again later")
)

// Number is the deterministic refund number of (order, trade) at the
// simulator: a repeated notification finds the same refund, and the
// provider dedups on it.
func Number(orderNo, tradeNo string) string {
	return NumberAt(pay.NamePaysim, orderNo, tradeNo)
}

// NumberAt is Number for a trade at any provider (trade numbers are unique
// per provider). The simulator's numbers are what they were before there
// were other providers. 26 characters: within every provider's limit for
// its idempotency key (Alipay out_request_no and WeChat out_refund_no: 64).
func NumberAt(provider, orderNo, tradeNo string) string {
	key := orderNo + "|" + tradeNo
	if provider != pay.NamePaysim && provider != "" {
		key = provider + "|" + key
	}
	sum := sha256.Sum256([]byte(key))
	return "RF" + hex.EncodeToString(sum[:12])
}

func numberGen(base string, gen int) string {
	if gen <= 1 {
		return base
	}
	return base + "-" + strconv.Itoa(gen)
}

// Open records a refund inside the caller's transaction (the payment's or
// the operator's) and queues its execution through the outbox; the
// transaction sends the task after its commit. An existing refund is left
// as it is.
func Open(ctx context.Context, tx *model.Store, o *model.Order, provider, tradeNo string, amount int64, reason string, now time.Time) error {
	no := NumberAt(provider, o.OrderNo, tradeNo)
	r := &model.Refund{RefundNo: no, BaseNo: no, OrderID: o.ID, OrderNo: o.OrderNo, Provider: provider, TradeNo: tradeNo,
		AmountCents: amount, Reason: reason, Status: model.RefundProcessing, CreatedAt: now, UpdatedAt: now}
	fresh, err := tx.InsertRefund(ctx, r)
	if err != nil || !fresh {
		return err
	}
	if err := tx.InsertEventLater(ctx, model.Event{ObjectType: "refund", ObjectNo: no, FromStatus: "-", ToStatus: model.RefundProcessing.String(), Reason: reason, CreatedAt: now}); err != nil {
		return err
	}
	return tx.InsertOutboxLater(ctx, executeRow(no, 1, now))
}

func executeRow(refundNo string, gen int, now time.Time) *model.OutboxRow {
	return model.TaskRow(tasks.ID(tasks.TypeRefundExecute, refundNo, gen), tasks.TypeRefundExecute,
		tasks.Encode(tasks.RefundPayload{RefundNo: refundNo, Gen: gen}), now, now)
}

// provider is the one that took r's money, if it is still enabled.
func (s *Service) provider(r *model.Refund) (pay.Provider, error) {
	name := r.Provider
	if name == "" {
		name = pay.NamePaysim
	}
	p, ok := s.pay.Get(name)
	if !ok {
		return nil, fmt.Errorf("refund %s: provider %q is not enabled (ORDERFLOW_PAY_PROVIDERS)", r.RefundNo, name)
	}
	return p, nil
}

func (s *Service) load(ctx context.Context, refundNo string) (*model.Refund, error) {
	r, err := s.store.RefundByNo(ctx, refundNo)
	return model.Found(r, err, ErrNotFound, "load refund %s", refundNo)
}
