// Package refund returns money: one refund per (order, trade), sent to the
// provider with out_request_no = refund_no, asked about until final, and
// handed to an operator (manual) when it cannot be finished automatically.
package refund

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"time"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/metrics"
	"orderflow/internal/infra/payclient"
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
	store    *model.Store
	provider *payclient.Client
	clock    clock.Clock
	log      *zap.Logger
	metrics  *metrics.Metrics
	set      Settings
}

// Deps are what the service needs.
type Deps struct {
	Store    *model.Store
	Provider *payclient.Client
	Clock    clock.Clock
	Log      *zap.Logger
	Metrics  *metrics.Metrics
}

// New returns the refund service.
func New(d Deps, s Settings) *Service {
	return &Service{store: d.Store, provider: d.Provider, clock: d.Clock, log: d.Log, metrics: d.Metrics, set: s}
}

// Errors.
var (
	ErrNotFound    = apperr.New(apperr.NotFound, "refund_not_found", "no such refund")
	ErrNotManual   = apperr.New(apperr.Conflict, "invalid_status", "only a refund in manual can be retried or resolved")
	ErrBadStatus   = apperr.New(apperr.Invalid, "invalid_status", "status must be succeeded, failed or processing")
	errStillPaying = errors.New("provider still processing the refund; asking again later")
)

// Number is the deterministic refund number of (order, trade): a repeated
// notification finds the same refund, and the provider dedups on it.
func Number(orderNo, tradeNo string) string {
	sum := sha256.Sum256([]byte(orderNo + "|" + tradeNo))
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
func Open(ctx context.Context, tx *model.Store, o *model.Order, tradeNo string, amount int64, reason string, now time.Time) error {
	no := Number(o.OrderNo, tradeNo)
	r := &model.Refund{RefundNo: no, BaseNo: no, OrderID: o.ID, OrderNo: o.OrderNo, TradeNo: tradeNo,
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

func (s *Service) load(ctx context.Context, refundNo string) (*model.Refund, error) {
	r, err := s.store.RefundByNo(ctx, refundNo)
	return model.Found(r, err, ErrNotFound, "load refund %s", refundNo)
}
