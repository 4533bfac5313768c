// Package alipay is Alipay's open platform (RSA2) as a pay.Provider, through
// github.com/smartwalle/alipay/v3: precreate (a QR code) for checkout,
// alipay.trade.query, alipay.trade.refund with out_request_no = refund_no,
// alipay.trade.fastpay.refund.query, notifications verified with Alipay's
// public key before anything is read, and the daily trade bill as
// pay.Statements (statement.go, bill.go). The SDK does every signature and
// verification; this package only maps fields and amounts.
package alipay

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/tracing"

	sdk "github.com/smartwalle/alipay/v3"
)

// Config is what the provider needs (ORDERFLOW_ALIPAY_*), keys as PEM text.
type Config struct {
	AppID      string
	PrivateKey string // the app's RSA2 private key (PKCS#1 or PKCS#8)
	PublicKey  string // Alipay's public key
	GatewayURL string
	NotifyURL  string
	Timeout    time.Duration // per call: longer is "outcome unknown"
}

// Provider talks to Alipay.
type Provider struct {
	c     *sdk.Client
	dl    *http.Client // bill downloads: a whole day's file, so no per-call Timeout
	appID string
	cfg   Config
}

var _ pay.Provider = (*Provider)(nil)

// beijing is the zone Alipay reads every timestamp in (time_expire, the
// request timestamp); fixed, so no time zone database is needed.
var beijing = time.FixedZone("CST", 8*3600)

// New builds the client. Errors name what is wrong, never a key.
func New(cfg Config) (*Provider, error) {
	c, err := sdk.New(cfg.AppID, cfg.PrivateKey, true,
		sdk.WithProductionGateway(cfg.GatewayURL),
		sdk.WithHTTPClient(&http.Client{Timeout: cfg.Timeout, Transport: tracing.Transport(nil)}),
		sdk.WithTimeLocation(beijing))
	if err != nil {
		return nil, errors.New("alipay: the app private key does not parse as an RSA key")
	}
	if err := c.LoadAliPayPublicKey(cfg.PublicKey); err != nil {
		return nil, errors.New("alipay: Alipay's public key does not parse as an RSA public key")
	}
	dl := &http.Client{Timeout: billDownloadTimeout, Transport: tracing.Transport(nil)}
	return &Provider{c: c, dl: dl, appID: cfg.AppID, cfg: cfg}, nil
}

// Name is pay.NameAlipay.
func (p *Provider) Name() string { return pay.NameAlipay }

// Checkout precreates the trade (out_trade_no = order number) and returns
// its QR code content; Alipay answers a repeat with the same trade.
func (p *Provider) Checkout(ctx context.Context, req pay.CheckoutRequest) (*pay.Checkout, error) {
	rsp, err := p.c.TradePreCreate(ctx, sdk.TradePreCreate{Trade: sdk.Trade{
		NotifyURL: p.cfg.NotifyURL, Subject: req.Subject, OutTradeNo: req.OrderNo,
		TotalAmount: Yuan(req.AmountCents), ProductCode: "FACE_TO_FACE_PAYMENT",
		TimeExpire: req.ExpiresAt.In(beijing).Format(timeLayout),
	}})
	if err != nil {
		return nil, fmt.Errorf("alipay precreate %s: %w", req.OrderNo, err)
	}
	if !rsp.IsSuccess() || rsp.QRCode == "" {
		return nil, fmt.Errorf("alipay precreate %s: %w", req.OrderNo, rsp.Error)
	}
	return &pay.Checkout{QRCode: rsp.QRCode, ExpiresAt: req.ExpiresAt}, nil
}

// Parse verifies the form's RSA2 signature with Alipay's public key (the
// SDK's DecodeNotification) before reading it. A refund shows as
// out_biz_no (= out_request_no) with gmt_refund; a paid trade as
// TRADE_SUCCESS or TRADE_FINISHED, at gmt_payment; anything else is
// acknowledged and ignored.
func (p *Provider) Parse(r *http.Request, body []byte) (*pay.Event, error) {
	values, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, pay.ErrBadSignature
	}
	if values.Get("alipay_cert_sn") != "" {
		// Public-key mode only: a certificate serial would make the SDK
		// fetch a certificate because a request said so.
		return nil, pay.ErrBadSignature
	}
	n, err := p.c.DecodeNotification(r.Context(), values)
	if err != nil || n.AppId != p.appID {
		return nil, pay.ErrBadSignature
	}
	if n.OutBizNo != "" && n.GmtRefund != "" {
		return &pay.Event{Refund: &pay.RefundUpdate{RefundNo: n.OutBizNo, Status: pay.RefundSucceeded}}, nil
	}
	if n.TradeStatus != sdk.TradeStatusSuccess && n.TradeStatus != sdk.TradeStatusFinished {
		return &pay.Event{}, nil
	}
	cents, err := Cents(n.TotalAmount)
	if err != nil {
		return nil, err
	}
	return &pay.Event{Paid: &pay.Paid{OrderNo: n.OutTradeNo, TradeNo: n.TradeNo, AmountCents: cents,
		At: alipayTime(n.GmtPayment)}}, nil
}

// Answer is Alipay's convention: the text "success" once recorded;
// anything else and Alipay sends the notification again.
func (p *Provider) Answer(w http.ResponseWriter, ok bool) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if ok {
		_, _ = w.Write([]byte("success"))
		return
	}
	_, _ = w.Write([]byte("fail"))
}

// QueryPayment asks alipay.trade.query by out_trade_no; its send_pay_date
// is the payment's time.
func (p *Provider) QueryPayment(ctx context.Context, orderNo, _ string) (*pay.Paid, error) {
	rsp, err := p.c.TradeQuery(ctx, sdk.TradeQuery{OutTradeNo: orderNo})
	if err != nil {
		return nil, fmt.Errorf("alipay trade.query %s: %w", orderNo, err)
	}
	if !rsp.IsSuccess() {
		if rsp.SubCode == "ACQ.TRADE_NOT_EXIST" {
			return nil, pay.ErrNotFound
		}
		return nil, fmt.Errorf("alipay trade.query %s: %w", orderNo, rsp.Error)
	}
	if rsp.TradeStatus != sdk.TradeStatusSuccess && rsp.TradeStatus != sdk.TradeStatusFinished {
		return nil, nil
	}
	cents, err := Cents(rsp.TotalAmount)
	if err != nil {
		return nil, err
	}
	return &pay.Paid{OrderNo: rsp.OutTradeNo, TradeNo: rsp.TradeNo, AmountCents: cents,
		At: alipayTime(rsp.SendPayDate)}, nil
}

// Refund calls alipay.trade.refund with out_request_no = refund_no, so a
// re-send never refunds twice. fund_change Y is done; N is a repeat or
// still in progress, which the query settles.
func (p *Provider) Refund(ctx context.Context, req pay.RefundRequest) (string, error) {
	rsp, err := p.c.TradeRefund(ctx, sdk.TradeRefund{
		OutTradeNo: req.OrderNo, TradeNo: req.TradeNo, RefundAmount: Yuan(req.AmountCents),
		OutRequestNo: req.RefundNo, RefundReason: "refund " + req.RefundNo,
	})
	if err != nil {
		return "", fmt.Errorf("alipay trade.refund %s: %w", req.RefundNo, err)
	}
	switch {
	case rsp.IsSuccess() && rsp.FundChange == "Y":
		return pay.RefundSucceeded, nil
	case rsp.IsSuccess():
		return pay.RefundProcessing, nil
	case rsp.Code == sdk.CodeBusinessFailed && rsp.SubCode != "ACQ.SYSTEM_ERROR":
		return pay.RefundFailed, nil
	}
	return "", fmt.Errorf("alipay trade.refund %s: %w", req.RefundNo, rsp.Error)
}

// QueryRefund asks alipay.trade.fastpay.refund.query. REFUND_SUCCESS is
// done; no status means Alipay has no refund under that number (safe to
// send: the number makes a re-send idempotent).
func (p *Provider) QueryRefund(ctx context.Context, req pay.RefundRequest) (string, error) {
	rsp, err := p.c.TradeFastPayRefundQuery(ctx, sdk.TradeFastPayRefundQuery{
		OutTradeNo: req.OrderNo, TradeNo: req.TradeNo, OutRequestNo: req.RefundNo,
	})
	if err != nil {
		return "", fmt.Errorf("alipay refund.query %s: %w", req.RefundNo, err)
	}
	switch {
	case rsp.IsSuccess() && rsp.RefundStatus == "REFUND_SUCCESS":
		return pay.RefundSucceeded, nil
	case rsp.IsSuccess(), rsp.SubCode == "ACQ.TRADE_NOT_EXIST":
		return "", pay.ErrNotFound
	}
	return "", fmt.Errorf("alipay refund.query %s: %w", req.RefundNo, rsp.Error)
}

// timeLayout is how Alipay writes a time (gmt_payment, send_pay_date, the
// bill's 完成时间), always Beijing time.
const timeLayout = "2006-01-02 15:04:05"

// alipayTime reads an Alipay time; zero when absent or not one (a payment
// is never refused for its time: Paid.At may be zero).
func alipayTime(s string) time.Time {
	t, err := time.ParseInLocation(timeLayout, strings.TrimSpace(s), beijing)
	if err != nil {
		return time.Time{}
	}
	return t
}
