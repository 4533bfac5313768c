// Package refund returns money: a whole trade that should not have been
// taken, or an operator's refund of an order's payment (whole or in part),
// each under its own refund_no, sent to the provider as its idempotency
// key, asked about until final, and handed to an operator (manual) when it
// cannot be finished automatically.
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

// Request is one refund to open: a trade's money, all of it or an
// operator's part of it, back through the provider that took it.
type Request struct {
	Provider    string
	TradeNo     string
	AmountCents int64  // this refund
	TradeCents  int64  // the whole payment (WeChat Pay asks for both); 0: AmountCents
	Reason      string // model.RefundReason*
	// Key is an operator's Idempotency-Key: the refund's number derives from
	// (order, key) instead of (order, trade), so one trade can be refunded
	// in parts and a repeated request finds its own refund.
	Key  string
	Note string // the operator's words
	// OfPayment counts the refund against the order's own payment
	// (orders.refunded_cents), refused with ErrExceedsPayment past it. A
	// late, duplicate or mismatched trade is other money: not counted.
	OfPayment bool
}

// ErrExceedsPayment refuses a refund that would take an order's refunds
// past what it was paid.
var ErrExceedsPayment = apperr.New(apperr.Conflict, "refund_exceeds_payment",
	"the order's refunds would add up to more than it was paid")

// Open records a refund inside the caller's transaction (the payment's or
// the operator's) and queues its execution through the outbox; the
// transaction sends the task after its commit. Every refund, whatever its
// reason, starts here. A refund already opened under the same number is
// returned as it is, with fresh false and nothing written.
func Open(ctx context.Context, tx *model.Store, o *model.Order, req Request, now time.Time) (r *model.Refund, fresh bool, err error) {
	no := NumberAt(req.Provider, o.OrderNo, req.TradeNo)
	if req.Key != "" {
		no = OperatorNumber(o.OrderNo, req.Key)
	}
	r = &model.Refund{RefundNo: no, BaseNo: no, NoGen: 1, TaskGen: 1, OrderID: o.ID, OrderNo: o.OrderNo, Provider: req.Provider, TradeNo: req.TradeNo,
		AmountCents: req.AmountCents, TradeCents: req.TradeCents, Reason: req.Reason, Note: req.Note,
		Status: model.RefundProcessing, CreatedAt: now, UpdatedAt: now}
	if fresh, err = tx.InsertRefund(ctx, r); err != nil {
		return nil, false, err
	}
	if !fresh {
		r, err = tx.RefundByBaseNo(ctx, no)
		return r, false, err
	}
	if req.OfPayment {
		added, err := tx.AddRefunded(ctx, o.ID, req.AmountCents)
		if err != nil {
			return nil, false, err
		}
		if !added {
			return nil, false, ErrExceedsPayment
		}
	}
	if err := tx.InsertEventLater(ctx, model.Event{ObjectType: "refund", ObjectNo: no, FromStatus: "-", ToStatus: model.RefundProcessing.String(), Reason: req.Reason, CreatedAt: now}); err != nil {
		return nil, false, err
	}
	return r, true, tx.InsertOutboxLater(ctx, executeRow(no, 1, now))
}

// OperatorNumber is the refund number of an operator's refund of order
// orderNo asked with Idempotency-Key key: the same request again, even
// after a crash, finds the same refund, and the provider dedups on it. 26
// characters, as NumberAt's.
func OperatorNumber(orderNo, key string) string {
	sum := sha256.Sum256([]byte("operator|" + orderNo + "|" + key))
	return "RF" + hex.EncodeToString(sum[:12])
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

// loadManual loads a refund for an operator's action, which only a refund
// in manual takes: any other answers ErrNotManual.
func (s *Service) loadManual(ctx context.Context, refundNo string) (*model.Refund, error) {
	r, err := s.load(ctx, refundNo)
	if err == nil && r.Status != model.RefundManual {
		return nil, ErrNotManual
	}
	return r, err
}
