// Statement reading (对账单). The simulator publishes a UTC day's statement
// at GET /statements?date=YYYY-MM-DD&cursor=…&limit=…, the request signed
// like every call, in pages of JSON
//
//	{"date", "lines": [{"kind", "trade_no", "order_no", "refund_no", "ref",
//	  "amount_cents", "fee_cents", "at"}], "next_cursor", "has_more"}
//
// each signed with X-Signature (the HMAC-SHA256 of the raw body under the
// shared secret), which is checked before any line of the page is read. A
// day not over yet answers 409 statement_not_ready. Nothing is retried
// here: the statement run that calls this retries the whole day.

package paysim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/sign"
)

var _ pay.Statements = (*Provider)(nil)

// maxStatementAnswer bounds one page's answer: a page of pay.StatementPage
// lines is a few hundred KB.
const maxStatementAnswer = 8 << 20

// statementPage is one page of the simulator's statement.
type statementPage struct {
	Date       string          `json:"date"`
	Lines      []statementLine `json:"lines"`
	NextCursor string          `json:"next_cursor"`
	HasMore    bool            `json:"has_more"`
}

// statementLine is one line of it.
type statementLine struct {
	Kind        string    `json:"kind"`
	TradeNo     string    `json:"trade_no"`
	OrderNo     string    `json:"order_no"`
	RefundNo    string    `json:"refund_no"`
	Ref         string    `json:"ref"`
	AmountCents int64     `json:"amount_cents"`
	FeeCents    int64     `json:"fee_cents"`
	At          time.Time `json:"at"`
}

// lineKinds maps the simulator's kinds to pay.Line*.
var lineKinds = map[string]string{"payment": pay.LinePayment, "refund": pay.LineRefund}

// StatementZone is UTC: the simulator's days are UTC calendar days.
func (p *Provider) StatementZone() *time.Location { return time.UTC }

// Statement reads day's statement page by page, handing each verified page
// to fn (in pieces of at most pay.StatementPage lines).
func (p *Provider) Statement(ctx context.Context, day string, fn func(page []pay.StatementLine) error) error {
	start, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return fmt.Errorf("paysim statement: day %q is not YYYY-MM-DD", day)
	}
	cursor := ""
	for pages := 1; ; pages++ {
		page, err := p.statementPage(ctx, day, cursor)
		if err != nil {
			return err
		}
		lines, err := page.lines(day, start)
		if err != nil {
			return fmt.Errorf("paysim statement %s page %d: %w", day, pages, err)
		}
		for len(lines) > 0 {
			n := min(len(lines), pay.StatementPage)
			if err := fn(lines[:n:n]); err != nil {
				return err
			}
			lines = lines[n:]
		}
		if !page.HasMore {
			return nil
		}
		if page.NextCursor == "" || page.NextCursor == cursor {
			return fmt.Errorf("paysim statement %s page %d: has_more with cursor %q after %q", day, pages, page.NextCursor, cursor)
		}
		cursor = page.NextCursor
	}
}

// statementPage fetches the page at cursor and verifies its signature
// before it decodes it.
func (p *Provider) statementPage(ctx context.Context, day, cursor string) (*statementPage, error) {
	q := url.Values{"date": {day}, "limit": {strconv.Itoa(pay.StatementPage)}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	path := "/statements?" + q.Encode()
	req, err := p.signedRequest(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("provider GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxStatementAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("provider GET %s: read answer: %w", path, err)
	}
	if len(raw) > maxStatementAnswer {
		return nil, fmt.Errorf("provider GET %s: answer larger than %d bytes", path, maxStatementAnswer)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		if resp.StatusCode == http.StatusConflict && json.Unmarshal(raw, &e) == nil && e.Error.Code == "statement_not_ready" {
			return nil, fmt.Errorf("paysim statement %s: %w", day, pay.ErrStatementNotReady)
		}
		return nil, fmt.Errorf("provider GET %s: status %d: %.200s", path, resp.StatusCode, raw)
	}
	if !sign.Valid(p.secret, raw, resp.Header.Get(sign.Header)) {
		return nil, fmt.Errorf("paysim statement %s: the answer's %w", day, errBadAnswerSignature)
	}
	var page statementPage
	if err := json.Unmarshal(raw, &page); err != nil {
		return nil, fmt.Errorf("provider GET %s: %w %.200q", path, errUnreadable, raw)
	}
	return &page, nil
}

// errBadAnswerSignature is a statement answer the simulator did not sign;
// it is a pay.ErrBadSignature.
var errBadAnswerSignature = fmt.Errorf("signature does not verify: %w", pay.ErrBadSignature)

// lines checks the page belongs to day (starting at start) and turns it
// into pay's lines; one bad line refuses the whole page.
func (pg *statementPage) lines(day string, start time.Time) ([]pay.StatementLine, error) {
	if pg.Date != day {
		return nil, fmt.Errorf("page of day %q", pg.Date)
	}
	end := start.AddDate(0, 0, 1)
	out := make([]pay.StatementLine, len(pg.Lines))
	for i, l := range pg.Lines {
		kind, ok := lineKinds[l.Kind]
		switch {
		case !ok:
			return nil, fmt.Errorf("line %d: unknown kind %q", i, l.Kind)
		case l.TradeNo == "" || l.Ref == "":
			return nil, fmt.Errorf("line %d: no trade_no or ref", i)
		case l.AmountCents <= 0 || l.FeeCents < 0:
			return nil, fmt.Errorf("line %d (%s): amount %d, fee %d", i, l.Ref, l.AmountCents, l.FeeCents)
		case l.At.Before(start) || !l.At.Before(end):
			return nil, fmt.Errorf("line %d (%s): time %s is not on %s", i, l.Ref, l.At.Format(time.RFC3339), day)
		}
		out[i] = pay.StatementLine{
			Kind: kind, TradeNo: l.TradeNo, OrderNo: l.OrderNo, RefundNo: l.RefundNo, Ref: l.Ref,
			AmountCents: l.AmountCents, FeeCents: l.FeeCents, At: l.At.UTC(),
		}
	}
	return out, nil
}
