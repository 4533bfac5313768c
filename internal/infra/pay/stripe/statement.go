// Stripe's daily statement is its balance transactions (GET
// /v1/balance_transactions) created within the UTC day, listed newest first
// 100 at a time through stripe-go's iterator (has_more / starting_after),
// each with its source expanded (expand[]=data.source): a charge (type
// charge or payment) is a payment, named by its PaymentIntent as Paid.TradeNo
// is; a refund (refund, payment_refund) is a refund, orderflow's when its
// metadata carries refund_no; an adjustment whose source is a dispute and
// that takes money is a dispute. Fees of their own (stripe_fee), payouts,
// transfers and a won dispute's reversal are no line. Amounts are signed
// in the list (money leaving the balance negative) and positive in a line.
// The answers carry no signature: the secret key authenticates the call.

package stripe

import (
	"context"
	"fmt"
	"time"

	"orderflow/internal/infra/pay"

	sdk "github.com/stripe/stripe-go/v83"
)

var _ pay.Statements = (*Provider)(nil)

// listLimit is the page Stripe is asked for: its largest.
const listLimit = 100

// StatementZone is UTC: Stripe's balance days are UTC days.
func (p *Provider) StatementZone() *time.Location { return time.UTC }

// Statement reads the balance transactions created on day (YYYY-MM-DD,
// UTC) and hands their lines to fn as the pages arrive, at most
// pay.StatementPage at a time; pay.ErrStatementNotReady while the day is
// not over (a transaction may still be created in it).
func (p *Provider) Statement(ctx context.Context, day string, fn func([]pay.StatementLine) error) error {
	start, err := time.ParseInLocation(time.DateOnly, day, time.UTC)
	if err != nil {
		return fmt.Errorf("stripe statement: day %q is not YYYY-MM-DD", day)
	}
	end := start.AddDate(0, 0, 1)
	if time.Now().Before(end) {
		return fmt.Errorf("stripe statement %s: the UTC day is not over: %w", day, pay.ErrStatementNotReady)
	}
	params := &sdk.BalanceTransactionListParams{
		CreatedRange: &sdk.RangeQueryParams{GreaterThanOrEqual: start.Unix(), LesserThan: end.Unix()},
	}
	params.Limit = sdk.Int64(listLimit)
	params.AddExpand("data.source")
	pages := pay.NewPager(fn)
	for bt, err := range p.client.V1BalanceTransactions.List(ctx, params) {
		if err != nil {
			return callErr("list balance transactions of "+day, err)
		}
		line, ok, err := p.statementLine(bt)
		if err != nil {
			return fmt.Errorf("stripe statement %s: %w", day, err)
		}
		if !ok {
			continue
		}
		if err := pages.Add(line); err != nil {
			return err
		}
	}
	return pages.Flush()
}

// statementLine maps one balance transaction; ok is false for one that is
// no line (fees of their own, payouts, a dispute's reversal, …).
func (p *Provider) statementLine(bt *sdk.BalanceTransaction) (line pay.StatementLine, ok bool, err error) {
	src := bt.Source
	switch bt.Type {
	case sdk.BalanceTransactionTypeCharge, sdk.BalanceTransactionTypePayment:
		if src == nil || src.Charge == nil {
			return line, false, fmt.Errorf("balance transaction %s: source charge not expanded", bt.ID)
		}
		ch := src.Charge
		tradeNo := ch.ID // a charge made without an intent, never by orderflow
		if ch.PaymentIntent != nil && ch.PaymentIntent.ID != "" {
			tradeNo = ch.PaymentIntent.ID
		}
		line = pay.StatementLine{Kind: pay.LinePayment, TradeNo: tradeNo, OrderNo: ch.Metadata[metaOrderNo],
			Ref: tradeNo, At: time.Unix(ch.Created, 0).UTC()}
	case sdk.BalanceTransactionTypeRefund, sdk.BalanceTransactionTypePaymentRefund:
		if src == nil || src.Refund == nil {
			return line, false, fmt.Errorf("balance transaction %s: source refund not expanded", bt.ID)
		}
		rf := src.Refund
		line = pay.StatementLine{Kind: pay.LineRefund, TradeNo: paymentOf(rf.PaymentIntent, rf.Charge),
			OrderNo: rf.Metadata[metaOrderNo], RefundNo: rf.Metadata[metaRefundNo], Ref: rf.ID,
			At: time.Unix(rf.Created, 0).UTC()}
	case sdk.BalanceTransactionTypeAdjustment:
		if src == nil || src.Type != sdk.BalanceTransactionSourceTypeDispute || bt.Amount >= 0 {
			return line, false, nil
		}
		if src.Dispute == nil {
			return line, false, fmt.Errorf("balance transaction %s: source dispute not expanded", bt.ID)
		}
		d := src.Dispute
		line = pay.StatementLine{Kind: pay.LineDispute, TradeNo: paymentOf(d.PaymentIntent, d.Charge),
			Ref: d.ID, At: time.Unix(d.Created, 0).UTC()}
	default:
		return line, false, nil
	}
	if string(bt.Currency) != p.cfg.Currency {
		return line, false, fmt.Errorf("balance transaction %s (%s) is in %s, not %s", bt.ID, line.Ref, bt.Currency, p.cfg.Currency)
	}
	if line.TradeNo == "" {
		return line, false, fmt.Errorf("balance transaction %s (%s) names no payment", bt.ID, line.Ref)
	}
	line.AmountCents, line.FeeCents = abs(bt.Amount), bt.Fee
	return line, true, nil
}

// paymentOf is the trade number a refund or dispute returns money of: its
// PaymentIntent, or the bare charge when there is none.
func paymentOf(pi *sdk.PaymentIntent, ch *sdk.Charge) string {
	if pi != nil && pi.ID != "" {
		return pi.ID
	}
	if ch != nil {
		return ch.ID
	}
	return ""
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
