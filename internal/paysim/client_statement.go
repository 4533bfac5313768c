package paysim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"orderflow/internal/infra/sign"
)

// ErrBadStatementSignature is a statement page whose X-Signature is not
// the HMAC of its body under the shared secret.
var ErrBadStatementSignature = errors.New("paysim statement: signature does not verify")

// Statement sends a signed GET /statements for one page of day's statement
// (cursor empty for the first page, limit 0 for MaxStatementLimit) and
// verifies the answer's signature before decoding it. A day not over yet is
// an *HTTPError with status 409 and code statement_not_ready.
func (c *Client) Statement(ctx context.Context, day, cursor string, limit int) (Statement, error) {
	q := url.Values{"date": {day}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	raw, hdr, err := c.send(ctx, http.MethodGet, "/statements?"+q.Encode(), nil, true)
	if err != nil {
		return Statement{}, err
	}
	if !sign.Valid(c.Secret, raw, hdr.Get(sign.Header)) {
		return Statement{}, ErrBadStatementSignature
	}
	var st Statement
	if err := json.Unmarshal(raw, &st); err != nil {
		return Statement{}, fmt.Errorf("paysim statement %s: decode answer: %w", day, err)
	}
	return st, nil
}

// SetClock fixes the simulator's clock at at; the zero time restores the
// real clock.
func (c *Client) SetClock(ctx context.Context, at time.Time) error {
	in := clockWire{}
	if !at.IsZero() {
		in.At = &at
	}
	return c.do(ctx, http.MethodPost, "/admin/clock", in, false, nil)
}

// ShiftClock makes the simulator's clock the real time plus offset (zero:
// the real time).
func (c *Client) ShiftClock(ctx context.Context, offset time.Duration) error {
	return c.do(ctx, http.MethodPost, "/admin/clock", clockWire{OffsetMS: offset.Milliseconds()}, false, nil)
}

// StatementDrop leaves the line(s) whose ref is ref out of the statement.
func (c *Client) StatementDrop(ctx context.Context, ref string) error {
	return c.do(ctx, http.MethodPost, "/admin/statements/drop", refWire{Ref: ref}, false, nil)
}

// StatementAlter lists the line whose ref is ref with amount cents.
func (c *Client) StatementAlter(ctx context.Context, ref string, cents int64) error {
	return c.do(ctx, http.MethodPost, "/admin/statements/alter", refWire{Ref: ref, AmountCents: cents}, false, nil)
}

// Synthesize makes day's statement list n generated payments (Sim.Synthesize).
func (c *Client) Synthesize(ctx context.Context, day string, n int, prefix string) error {
	return c.do(ctx, http.MethodPost, "/admin/statements/synthesize", synthesizeWire{Date: day, N: n, Prefix: prefix}, false, nil)
}

// DashboardRefund refunds cents of the order's payment without telling
// orderflow (Sim.DashboardRefund) and returns the refund's id.
func (c *Client) DashboardRefund(ctx context.Context, orderNo string, cents int64) (string, error) {
	var a offstageAnswer
	err := c.do(ctx, http.MethodPost, "/admin/dashboard-refunds", offstageWire{OrderNo: orderNo, AmountCents: cents}, false, &a)
	return a.Ref, err
}

// PayUnseen takes a payment for the order without telling orderflow
// (Sim.PayUnseen) and returns its trade number.
func (c *Client) PayUnseen(ctx context.Context, orderNo string, cents int64) (string, error) {
	var a offstageAnswer
	err := c.do(ctx, http.MethodPost, "/admin/pay-unseen", offstageWire{OrderNo: orderNo, AmountCents: cents}, false, &a)
	return a.TradeNo, err
}
