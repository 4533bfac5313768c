package audit

import "orderflow/model"

// RuleDisputeMoney: each dispute names a recorded payment of its order and
// disputes at most what it paid; a lost one records the money taken back
// (lost_cents = amount_cents), any other none, and a closed status is
// closed; and per trade the money balances — paid = succeeded refunds +
// lost disputes + kept, kept never below zero, unless the dispute was
// flagged already_refunded (the double loss was alerted when it opened).
const RuleDisputeMoney = "dispute-money"

type dispute struct {
	DisputeID, TradeNo string
	OrderID            int64
	OrderNo            string
	Status             model.DisputeStatus
	AmountCents        int64
	LostCents          int64
	Flag               string
	Closed             bool
}

// disputeMoney applies RuleDisputeMoney.
func (a *auditor) disputeMoney(c *collector) {
	paid := map[orderTrade]int64{}
	for _, p := range a.l.payments {
		paid[orderTrade{p.OrderID, p.TradeNo}] += p.AmountCents
	}
	out := map[orderTrade]int64{}
	for _, r := range a.l.refunds {
		if r.Status == model.RefundSucceeded {
			out[orderTrade{r.OrderID, r.TradeNo}] += r.AmountCents
		}
	}
	flagged := map[orderTrade]bool{}
	for _, d := range a.l.disputes {
		c.check()
		k := orderTrade{d.OrderID, d.TradeNo}
		in, ok := paid[k]
		switch {
		case !ok:
			c.violation("dispute %s on order %s names trade %s, which the ledger never recorded as its payment", d.DisputeID, d.OrderNo, d.TradeNo)
		case d.AmountCents > in:
			c.violation("dispute %s disputes %d cents of trade %s, which paid %d", d.DisputeID, d.AmountCents, d.TradeNo, in)
		}
		lost := d.Status == model.DisputeLost
		switch {
		case lost && d.LostCents != d.AmountCents:
			c.violation("dispute %s is lost but records %d cents taken back of %d", d.DisputeID, d.LostCents, d.AmountCents)
		case !lost && d.LostCents != 0:
			c.violation("dispute %s is %s but records %d cents taken back", d.DisputeID, d.Status, d.LostCents)
		case model.DisputeMachine.Terminal(d.Status) != d.Closed:
			c.violation("dispute %s is %s with closed %v", d.DisputeID, d.Status, d.Closed)
		}
		out[k] += d.LostCents
		flagged[k] = flagged[k] || d.Flag == model.DisputeFlagAlreadyRefunded
	}
	for k, gone := range out {
		if kept := paid[k] - gone; kept < 0 && !flagged[k] {
			c.violation("trade %s of order id %d paid %d cents, %d went back (refunds and lost disputes): kept %d", k.trade, k.orderID, paid[k], gone, kept)
		}
	}
}
