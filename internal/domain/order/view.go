package order

import (
	"context"
	"fmt"
	"time"

	"orderflow/model"
)

// View is an order as the API shows it.
type View struct {
	OrderNo     string `json:"order_no"`
	UserID      int64  `json:"user_id"`
	ProductID   int64  `json:"product_id"`
	Quantity    int    `json:"quantity"`
	AmountCents int64  `json:"amount_cents"`
	// RefundedCents is what operators returned of the order's payment
	// (processing refunds included): never more than AmountCents.
	RefundedCents int64        `json:"refunded_cents"`
	Status        string       `json:"status"`
	TradeNo       *string      `json:"trade_no"`
	Cards         []string     `json:"cards"`
	Refunds       []RefundView `json:"refunds"`
	// Disputes are the card disputes (chargebacks) on its payments.
	Disputes   []DisputeView `json:"disputes"`
	CreatedAt  time.Time     `json:"created_at"`
	ExpireAt   time.Time     `json:"expire_at"`
	PaidAt     *time.Time    `json:"paid_at"`
	FinishedAt *time.Time    `json:"finished_at"`
	ClosedAt   *time.Time    `json:"closed_at"`
}

// RefundView is one refund of an order.
type RefundView struct {
	RefundNo    string             `json:"refund_no"`
	Status      model.RefundStatus `json:"status"`
	AmountCents int64              `json:"amount_cents"`
}

// DisputeView is one dispute of an order, as its provider last reported
// it; Flag is not_delivered, already_refunded or "".
type DisputeView struct {
	DisputeID     string              `json:"dispute_id"`
	Status        model.DisputeStatus `json:"status"`
	Reason        string              `json:"reason"`
	AmountCents   int64               `json:"amount_cents"`
	Flag          string              `json:"flag"`
	EvidenceDueBy *time.Time          `json:"evidence_due_by"`
}

// AdminView is an order with its event history, for operators.
type AdminView struct {
	View
	Attempts    int           `json:"attempts"`
	ActivateGen int           `json:"activate_gen"`
	Events      []model.Event `json:"events"`
	// HeldPayments are payments notified for this order whose trade already
	// pays another order: held for an operator, never delivered.
	HeldPayments []HeldPaymentView `json:"held_payments"`
	// Payments are the payments recorded for this order and what each did
	// (model.Payment*): provider manual is one an operator confirmed.
	Payments []PaymentView `json:"payments"`
}

// PaymentView is one payment recorded for an order.
type PaymentView struct {
	Provider    string            `json:"provider"`
	TradeNo     string            `json:"trade_no"`
	AmountCents int64             `json:"amount_cents"`
	Disposition model.Disposition `json:"disposition"`
	CreatedAt   time.Time         `json:"created_at"`
}

// HeldPaymentView is one payment held against an order.
type HeldPaymentView struct {
	TradeNo     string    `json:"trade_no"`
	AmountCents int64     `json:"amount_cents"`
	PaidOrderNo string    `json:"paid_order_no"` // the order the trade already pays
	CreatedAt   time.Time `json:"created_at"`
}

// Viewer is who asks: a buyer sees only their own orders, the admin any.
type Viewer struct {
	UserID int64
	Admin  bool
}

// Get returns an order for a viewer, from the cache when it is at rest.
func (s *Service) Get(ctx context.Context, orderNo string, who Viewer) (*View, error) {
	v, ok := s.cachedView(ctx, orderNo)
	if !ok {
		o, err := s.load(ctx, orderNo)
		if err != nil {
			return nil, err
		}
		if v, err = s.view(ctx, o); err != nil {
			return nil, err
		}
		if cacheable(o.Status) {
			s.storeView(ctx, o, v)
		}
	}
	if !who.Admin && v.UserID != who.UserID {
		// Same answer as for a missing order: don't confirm that the number exists.
		return nil, ErrNotFound
	}
	return v, nil
}

// GetAdmin returns an order with its history; never cached.
func (s *Service) GetAdmin(ctx context.Context, orderNo string) (*AdminView, error) {
	o, err := s.load(ctx, orderNo)
	if err != nil {
		return nil, err
	}
	return s.adminView(ctx, o)
}

func (s *Service) adminView(ctx context.Context, o *model.Order) (*AdminView, error) {
	orderNo := o.OrderNo
	v, err := s.view(ctx, o)
	if err != nil {
		return nil, err
	}
	events, err := s.store.EventsFor(ctx, "order", orderNo)
	if err != nil {
		return nil, fmt.Errorf("order %s events: %w", orderNo, err)
	}
	held, err := s.store.HeldPaymentsForOrder(ctx, o.ID)
	if err != nil {
		return nil, fmt.Errorf("order %s held payments: %w", orderNo, err)
	}
	pays, err := s.store.PaymentsForOrder(ctx, o.ID)
	if err != nil {
		return nil, fmt.Errorf("order %s payments: %w", orderNo, err)
	}
	av := &AdminView{View: *v, Attempts: o.Attempts, ActivateGen: o.ActivateGen, Events: events, HeldPayments: []HeldPaymentView{}, Payments: []PaymentView{}}
	for _, h := range held {
		av.HeldPayments = append(av.HeldPayments, HeldPaymentView{TradeNo: h.TradeNo, AmountCents: h.AmountCents, PaidOrderNo: h.PaidOrderNo, CreatedAt: h.CreatedAt})
	}
	for _, p := range pays {
		av.Payments = append(av.Payments, PaymentView{Provider: p.Provider, TradeNo: p.TradeNo, AmountCents: p.AmountCents, Disposition: p.Disposition, CreatedAt: p.CreatedAt})
	}
	return av, nil
}

// List pages through orders for operators, newest first.
func (s *Service) List(ctx context.Context, status *model.OrderStatus, beforeID int64, limit int) ([]View, error) {
	orders, err := s.store.ListOrders(ctx, status, beforeID, limit)
	if err != nil {
		return nil, fmt.Errorf("list orders: %w", err)
	}
	out := make([]View, 0, len(orders))
	for i := range orders {
		out = append(out, baseView(&orders[i]))
	}
	return out, nil
}

func (s *Service) load(ctx context.Context, orderNo string) (*model.Order, error) {
	o, err := s.store.OrderByNo(ctx, orderNo)
	return model.Found(o, err, ErrNotFound, "load order %s", orderNo)
}

// loadIn loads an order for a use case that acts on it only in status;
// in any other it answers refused.
func (s *Service) loadIn(ctx context.Context, orderNo string, status model.OrderStatus, refused error) (*model.Order, error) {
	o, err := s.load(ctx, orderNo)
	if err == nil && o.Status != status {
		return nil, refused
	}
	return o, err
}

func (s *Service) view(ctx context.Context, o *model.Order) (*View, error) {
	v := baseView(o)
	refunds, err := s.store.RefundsForOrder(ctx, o.ID)
	if err != nil {
		return nil, fmt.Errorf("order %s refunds: %w", o.OrderNo, err)
	}
	for _, r := range refunds {
		v.Refunds = append(v.Refunds, RefundView{RefundNo: r.RefundNo, Status: r.Status, AmountCents: r.AmountCents})
	}
	disputes, err := s.store.DisputesForOrder(ctx, o.ID)
	if err != nil {
		return nil, fmt.Errorf("order %s disputes: %w", o.OrderNo, err)
	}
	for _, d := range disputes {
		v.Disputes = append(v.Disputes, DisputeView{DisputeID: d.DisputeID, Status: d.Status, Reason: d.Reason,
			AmountCents: d.AmountCents, Flag: d.Flag, EvidenceDueBy: d.EvidenceDueBy})
	}
	if o.Kind == model.KindCard && o.Status == model.OrderFinished {
		codes, err := s.store.SoldCodes(ctx, o.ID)
		if err != nil {
			return nil, fmt.Errorf("order %s cards: %w", o.OrderNo, err)
		}
		v.Cards = codes
	}
	return &v, nil
}

func baseView(o *model.Order) View {
	return View{
		OrderNo: o.OrderNo, UserID: o.UserID, ProductID: o.ProductID, Quantity: o.Quantity,
		AmountCents: o.AmountCents, RefundedCents: o.RefundedCents, Status: o.Status.String(), TradeNo: o.TradeNo,
		Cards: []string{}, Refunds: []RefundView{}, Disputes: []DisputeView{},
		CreatedAt: o.CreatedAt, ExpireAt: o.ExpireAt, PaidAt: o.PaidAt, FinishedAt: o.FinishedAt, ClosedAt: o.ClosedAt,
	}
}
