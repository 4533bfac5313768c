package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/infra/pay"
	"orderflow/model"

	"go.uber.org/zap"
)

// Checkout errors.
var (
	ErrUnknownProvider     = apperr.New(apperr.Invalid, "unknown_provider", "no such payment provider is enabled")
	ErrNotPayable          = apperr.New(apperr.Conflict, "invalid_status", "only a pending order can be paid")
	ErrProviderUnavailable = apperr.New(apperr.Unavailable, "provider_unavailable", "the payment provider did not answer; try again")
)

// CheckoutView is what the buyer's page needs to pay: one of PayURL,
// QRCode and ClientSecret, by provider, and the time it is good until.
type CheckoutView struct {
	Provider     string    `json:"provider"`
	OrderNo      string    `json:"order_no"`
	ExpiresAt    time.Time `json:"expires_at"`
	PayURL       string    `json:"pay_url,omitempty"`
	QRCode       string    `json:"qr_code,omitempty"`
	ClientSecret string    `json:"client_secret,omitempty"`
}

// Checkout starts the payment of a pending order at a provider, or returns
// the one already started there; another provider for the same order
// starts a second payment, and both are watched (recover.go). The payment
// is never good past the order's expiry.
func (s *Service) Checkout(ctx context.Context, orderNo, provider string, who Viewer) (*CheckoutView, error) {
	p, ok := s.pay.Get(provider)
	if !ok {
		return nil, ErrUnknownProvider
	}
	o, err := s.load(ctx, orderNo)
	if err != nil {
		return nil, err
	}
	if !who.Admin && o.UserID != who.UserID {
		return nil, ErrNotFound
	}
	now := s.clock.Now()
	if o.Status != model.OrderPending || !now.Before(o.ExpireAt) {
		return nil, ErrNotPayable
	}
	a, err := s.store.PaymentAttempt(ctx, o.ID, provider)
	if err == nil {
		return checkoutView(a), nil
	}
	if !errors.Is(err, model.ErrNotFound) {
		return nil, fmt.Errorf("checkout %s at %s: %w", orderNo, provider, err)
	}
	// The provider dedups on the order number, so two racing calls start
	// one payment there; the unique (order, provider) keeps one row here.
	c, err := p.Checkout(ctx, pay.CheckoutRequest{
		OrderNo: o.OrderNo, AmountCents: o.AmountCents, Subject: "Order " + o.OrderNo, ExpiresAt: o.ExpireAt,
	})
	if err != nil {
		s.log.Warn("checkout: provider did not start the payment", zap.String("order_no", orderNo),
			zap.String("provider", provider), zap.Error(err))
		return nil, ErrProviderUnavailable
	}
	exp := o.ExpireAt
	if !c.ExpiresAt.IsZero() && c.ExpiresAt.Before(exp) {
		exp = c.ExpiresAt
	}
	a = &model.PaymentAttempt{OrderID: o.ID, OrderNo: o.OrderNo, Provider: provider, Ref: c.Ref,
		PayURL: c.PayURL, QRCode: c.QRCode, ClientSecret: c.ClientSecret, ExpiresAt: exp, CreatedAt: now}
	fresh, err := s.store.InsertPaymentAttempt(ctx, a)
	if err != nil {
		return nil, fmt.Errorf("checkout %s at %s: record: %w", orderNo, provider, err)
	}
	if !fresh {
		if a, err = s.store.PaymentAttempt(ctx, o.ID, provider); err != nil {
			return nil, fmt.Errorf("checkout %s at %s: %w", orderNo, provider, err)
		}
	} else {
		s.log.Info("payment started", zap.String("order_no", orderNo), zap.String("provider", provider))
	}
	return checkoutView(a), nil
}

func checkoutView(a *model.PaymentAttempt) *CheckoutView {
	return &CheckoutView{Provider: a.Provider, OrderNo: a.OrderNo, ExpiresAt: a.ExpiresAt,
		PayURL: a.PayURL, QRCode: a.QRCode, ClientSecret: a.ClientSecret}
}
