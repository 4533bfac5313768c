package pay

import (
	"context"
	"errors"
	"time"
)

// Statement line kinds: what moved the money on a provider's statement.
const (
	// LinePayment is money the provider took for a payment.
	LinePayment = "payment"
	// LineRefund is money the provider gave back for a refund, whoever
	// asked for it (orderflow, or an operator in the provider's dashboard).
	LineRefund = "refund"
	// LineDispute is money a card dispute took back (Stripe only).
	LineDispute = "dispute"
)

// StatementPage is how many lines a provider hands over at once at most:
// a day of a million lines is read in pages, never held whole.
const StatementPage = 2000

// ErrStatementNotReady is a day the provider has not published yet (too
// early, or the provider's bill is still being built): try again later.
var ErrStatementNotReady = errors.New("provider statement not published yet")

// StatementLine is one line of a provider's daily statement, in cents.
type StatementLine struct {
	Kind string // Line*
	// TradeNo is the payment's trade number as Paid.TradeNo names it; for
	// a refund or a dispute, the payment it returns money of.
	TradeNo string
	// OrderNo is the order number the payment was started for, when the
	// statement names it (it feeds an unknown payment to the payment path).
	OrderNo string
	// RefundNo is the merchant refund number the line carries, as is: the
	// one orderflow sent (RefundRequest.RefundNo) for its own refunds; for
	// one made elsewhere, whatever the provider put there, or empty. Whether
	// orderflow sent it is the ledger's to say, not the provider's.
	RefundNo string
	// Ref is the provider's own id of the line: the trade number for a
	// payment, the provider's refund or dispute id otherwise. Unique per
	// provider and kind; a break names it.
	Ref         string
	AmountCents int64 // gross, positive for every kind
	FeeCents    int64 // the provider's fee on the line, when the statement gives it
	// At is the provider's own time of the payment or refund.
	At time.Time
}

// Statements is a provider that publishes a daily statement (对账单).
type Statements interface {
	// StatementZone is the calendar the provider's statement days follow
	// (Alipay and WeChat: Asia/Shanghai; Stripe and paysim: UTC).
	StatementZone() *time.Location
	// Statement reads the provider's statement of one day (YYYY-MM-DD in
	// StatementZone) and hands its lines to fn in pages of at most
	// StatementPage lines, in the provider's order, verifying whatever the
	// provider signs or hashes before handing over any line. fn's error
	// stops the read and is returned; ErrStatementNotReady when the day is
	// not published yet.
	Statement(ctx context.Context, day string, fn func(page []StatementLine) error) error
}

// Pager gathers a statement's lines, as a provider reads them, into the
// pages of at most StatementPage lines that Statements.Statement hands to
// its fn. Each page is a slice of its own: fn may keep the one it is given.
type Pager struct {
	fn   func(page []StatementLine) error
	page []StatementLine
}

// NewPager returns a pager handing its pages to fn.
func NewPager(fn func(page []StatementLine) error) *Pager {
	return &Pager{fn: fn, page: make([]StatementLine, 0, StatementPage)}
}

// Add adds l to the page, handing the page to fn once it is full; fn's
// error is returned.
func (p *Pager) Add(l StatementLine) error {
	p.page = append(p.page, l)
	if len(p.page) < StatementPage {
		return nil
	}
	return p.hand()
}

// Flush hands the last page, if any line is waiting, to fn.
func (p *Pager) Flush() error {
	if len(p.page) == 0 {
		return nil
	}
	return p.hand()
}

func (p *Pager) hand() error {
	page := p.page
	p.page = make([]StatementLine, 0, StatementPage)
	return p.fn(page)
}
