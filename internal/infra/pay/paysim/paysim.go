// Package paysim is the simulator's protocol (SPEC "Payment provider") as a
// pay.Provider: JSON bodies, every request and callback signed with
// X-Signature. The simulator itself is internal/paysim (cmd/paysim); this is
// orderflow's side of the wire, and the default provider.
package paysim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/sign"
	"orderflow/internal/infra/tracing"
)

// Provider calls the simulator and reads its signed notifications.
type Provider struct {
	base   string
	secret string
	http   *http.Client
}

var _ pay.Provider = (*Provider)(nil)

// New returns the provider with a per-call timeout: a call that takes
// longer has an unknown outcome, and the caller must ask before sending again.
func New(baseURL, secret string, timeout time.Duration) *Provider {
	return &Provider{base: baseURL, secret: secret, http: &http.Client{Timeout: timeout, Transport: tracing.Transport(nil)}}
}

// Name is pay.NamePaysim.
func (p *Provider) Name() string { return pay.NamePaysim }

// Checkout needs no call: the simulator pays on its admin call (or the
// buyer's visit to the pay URL), so the URL names the order and amount.
func (p *Provider) Checkout(_ context.Context, req pay.CheckoutRequest) (*pay.Checkout, error) {
	q := url.Values{"amount_cents": {strconv.FormatInt(req.AmountCents, 10)}}
	return &pay.Checkout{
		PayURL:    p.base + "/checkout/" + url.PathEscape(req.OrderNo) + "?" + q.Encode(),
		ExpiresAt: req.ExpiresAt,
	}, nil
}

// notice is either of the simulator's signed bodies: a payment
// (order_no, trade_no, amount_cents, paid_at) or a refund callback
// (out_request_no, status).
type notice struct {
	OrderNo      string `json:"order_no"`
	TradeNo      string `json:"trade_no"`
	AmountCents  int64  `json:"amount_cents"`
	OutRequestNo string `json:"out_request_no"`
	Status       string `json:"status"`
	// PaidAt is the simulator's time of the payment; absent from an older
	// simulator's messages (a zero Paid.At).
	PaidAt time.Time `json:"paid_at"`
}

// paid is the payment n tells of.
func (n *notice) paid() *pay.Paid {
	return &pay.Paid{OrderNo: n.OrderNo, TradeNo: n.TradeNo, AmountCents: n.AmountCents, At: n.PaidAt}
}

// Parse checks X-Signature over the raw body before it reads it.
func (p *Provider) Parse(r *http.Request, body []byte) (*pay.Event, error) {
	if !sign.Valid(p.secret, body, r.Header.Get(sign.Header)) {
		return nil, pay.ErrBadSignature
	}
	var n notice
	if err := json.Unmarshal(body, &n); err != nil {
		return nil, fmt.Errorf("paysim notification: %w", err)
	}
	switch {
	case n.OutRequestNo != "":
		return &pay.Event{Refund: &pay.RefundUpdate{RefundNo: n.OutRequestNo, Status: n.Status}}, nil
	case n.OrderNo != "":
		return &pay.Event{Paid: n.paid()}, nil
	}
	return &pay.Event{}, nil
}

// Answer is the simulator's convention: {"result":"success"} once recorded.
func (p *Provider) Answer(w http.ResponseWriter, ok bool) {
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"result":"fail"}`))
		return
	}
	_, _ = w.Write([]byte(`{"result":"success"}`))
}

// QueryPayment asks GET /payments/{order_no}.
func (p *Provider) QueryPayment(ctx context.Context, orderNo, _ string) (*pay.Paid, error) {
	var b notice
	code, err := p.do(ctx, http.MethodGet, "/payments/"+url.PathEscape(orderNo), nil, &b)
	if code == http.StatusNotFound {
		return nil, pay.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if b.Status != pay.RefundSucceeded || b.TradeNo == "" {
		return nil, nil
	}
	return b.paid(), nil
}

// refundBody is POST /refunds.
type refundBody struct {
	OutRequestNo string `json:"out_request_no"`
	TradeNo      string `json:"trade_no"`
	OrderNo      string `json:"order_no"`
	AmountCents  int64  `json:"amount_cents"`
}

// Refund sends a refund (idempotent per out_request_no at the simulator) and
// returns its status. Any error means "unknown — ask again".
func (p *Provider) Refund(ctx context.Context, r pay.RefundRequest) (string, error) {
	body, _ := json.Marshal(refundBody{OutRequestNo: r.RefundNo, TradeNo: r.TradeNo, OrderNo: r.OrderNo, AmountCents: r.AmountCents})
	var b notice
	_, err := p.do(ctx, http.MethodPost, "/refunds", body, &b)
	return b.Status, err
}

// QueryRefund asks GET /refunds/{out_request_no}; pay.ErrNotFound when the
// simulator never saw it (safe to send).
func (p *Provider) QueryRefund(ctx context.Context, r pay.RefundRequest) (string, error) {
	var b notice
	code, err := p.do(ctx, http.MethodGet, "/refunds/"+url.PathEscape(r.RefundNo), nil, &b)
	if code == http.StatusNotFound {
		return "", pay.ErrNotFound
	}
	return b.Status, err
}

var errUnreadable = errors.New("unreadable answer")

func (p *Provider) do(ctx context.Context, method, path string, body []byte, out *notice) (int, error) {
	req, err := p.signedRequest(ctx, method, path, body)
	if err != nil {
		return 0, err
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("provider %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, fmt.Errorf("provider %s %s: status %d: %.200s", method, path, resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil || out.Status == "" {
		return resp.StatusCode, fmt.Errorf("provider %s %s: %w %.200q", method, path, errUnreadable, raw)
	}
	return resp.StatusCode, nil
}

// signedRequest is a call to the simulator with X-Signature over body (the
// empty body when nil).
func (p *Provider) signedRequest(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, p.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("provider %s %s: %w", method, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(sign.Header, sign.Sum(p.secret, body))
	return req, nil
}
