package wechat

import (
	"context"
	"fmt"
	"time"

	"orderflow/internal/infra/pay"

	"github.com/wechatpay-apiv3/wechatpay-go/core"
	"github.com/wechatpay-apiv3/wechatpay-go/services/payments"
	"github.com/wechatpay-apiv3/wechatpay-go/services/payments/native"
)

// Checkout places a Native order: code_url is the QR code's content. WeChat
// Pay answers the same out_trade_no with the same code_url, so a repeated
// checkout is the same payment; time_expire stops it at the order's expiry.
func (p *Provider) Checkout(ctx context.Context, req pay.CheckoutRequest) (*pay.Checkout, error) {
	resp, _, err := p.native.Prepay(ctx, native.PrepayRequest{
		Appid:       core.String(p.cfg.AppID),
		Mchid:       core.String(p.cfg.MchID),
		Description: core.String(req.Subject),
		OutTradeNo:  core.String(req.OrderNo),
		TimeExpire:  core.Time(req.ExpiresAt),
		NotifyUrl:   core.String(p.cfg.NotifyURL),
		Amount:      &native.Amount{Total: core.Int64(req.AmountCents), Currency: core.String(currency)},
	})
	if err != nil {
		return nil, callErr("prepay "+req.OrderNo, err)
	}
	if resp.CodeUrl == nil || *resp.CodeUrl == "" {
		return nil, fmt.Errorf("wechat prepay %s: no code_url in the answer", req.OrderNo)
	}
	return &pay.Checkout{QRCode: *resp.CodeUrl, ExpiresAt: req.ExpiresAt}, nil
}

// QueryPayment asks for the order by out_trade_no (ref is unused: WeChat
// Pay's own transaction id exists only once paid).
func (p *Provider) QueryPayment(ctx context.Context, orderNo, _ string) (*pay.Paid, error) {
	tx, _, err := p.native.QueryOrderByOutTradeNo(ctx, native.QueryOrderByOutTradeNoRequest{
		OutTradeNo: core.String(orderNo),
		Mchid:      core.String(p.cfg.MchID),
	})
	if notFound(err) {
		return nil, pay.ErrNotFound
	}
	if err != nil {
		return nil, callErr("query order "+orderNo, err)
	}
	return p.paid(tx)
}

// paid maps a transaction (queried or notified) to a payment when it
// succeeded for this merchant; nil when it has not (yet). At is WeChat
// Pay's success_time, the time its trade bill lists the payment under.
func (p *Provider) paid(tx *payments.Transaction) (*pay.Paid, error) {
	if tx == nil || deref(tx.TradeState) != "SUCCESS" {
		return nil, nil
	}
	if deref(tx.Mchid) != p.cfg.MchID {
		return nil, fmt.Errorf("wechat: transaction %s is for another merchant", deref(tx.TransactionId))
	}
	if tx.Amount == nil || tx.Amount.Total == nil || deref(tx.TransactionId) == "" || deref(tx.OutTradeNo) == "" {
		return nil, fmt.Errorf("wechat: successful transaction %s lacks amount or numbers", deref(tx.TransactionId))
	}
	if c := deref(tx.Amount.Currency); c != "" && c != currency {
		return nil, fmt.Errorf("wechat: transaction %s in %s, not %s", deref(tx.TransactionId), c, currency)
	}
	paid := &pay.Paid{OrderNo: *tx.OutTradeNo, TradeNo: *tx.TransactionId, AmountCents: *tx.Amount.Total}
	if st := deref(tx.SuccessTime); st != "" {
		at, err := time.Parse(time.RFC3339, st)
		if err != nil {
			return nil, fmt.Errorf("wechat: transaction %s: success_time %q is not RFC 3339", paid.TradeNo, st)
		}
		// In the statement's zone, as the bill's lines are: one instant, one value.
		paid.At = at.In(shanghai)
	}
	return paid, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
