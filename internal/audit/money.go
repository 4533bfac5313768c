package audit

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"orderflow/internal/paysim"
	"orderflow/model"
)

// walletBalance: balance = sum of entries, and every entry has a source.
func (a *auditor) walletBalance(c *collector) {
	sum := map[int64]int64{}
	groups := map[string]*group{}
	for _, g := range a.l.groups {
		groups[g.GroupNo] = g
	}
	for _, e := range a.l.entries {
		sum[e.UserID] += e.AmountCents
		if a.l.users[e.UserID] == nil {
			c.violation("wallet entry %s for unknown user %d", e.Ref, e.UserID)
			continue
		}
		switch e.Kind {
		case "initial":
			if e.Ref != "user:"+strconv.FormatInt(e.UserID, 10)+":initial" {
				c.violation("opening entry %s of user %d names another user", e.Ref, e.UserID)
			}
		case "credit":
			no, ok := strings.CutPrefix(e.Ref, "order:")
			o := a.l.orderByNo[no]
			switch {
			case !ok || o == nil:
				c.violation("credit %s of %d cents to user %d has no order behind it", e.Ref, e.AmountCents, e.UserID)
			case o.UserID != e.UserID || o.Kind != string(model.KindRecharge):
				c.violation("credit %s to user %d: order %s is user %d's %s order", e.Ref, e.UserID, o.OrderNo, o.UserID, o.Kind)
			case e.AmountCents <= 0:
				c.violation("credit %s to user %d is %d cents", e.Ref, e.UserID, e.AmountCents)
			}
		case "charge":
			g, uid, ok := parseChargeRef(e.Ref, groups)
			switch {
			case !ok:
				c.violation("charge %s of %d cents to user %d has no group behind it", e.Ref, e.AmountCents, e.UserID)
			case uid != e.UserID:
				c.violation("charge %s booked on user %d", e.Ref, e.UserID)
			case e.AmountCents != -g.PriceCents:
				c.violation("charge %s is %d cents, group price is %d", e.Ref, e.AmountCents, g.PriceCents)
			}
		default:
			c.violation("wallet entry %s of user %d has unknown kind %q", e.Ref, e.UserID, e.Kind)
		}
	}
	for _, id := range sortedKeys(a.l.users) {
		u := a.l.users[id]
		c.check()
		if u.BalanceCents != sum[id] {
			c.violation("user %d balance %d cents, wallet entries sum to %d (off by %+d)", id, u.BalanceCents, sum[id], u.BalanceCents-sum[id])
		}
	}
}

// parseChargeRef reads "group:<group_no>:user:<id>".
func parseChargeRef(ref string, groups map[string]*group) (*group, int64, bool) {
	rest, ok := strings.CutPrefix(ref, "group:")
	if !ok {
		return nil, 0, false
	}
	no, uid, ok := strings.Cut(rest, ":user:")
	if !ok {
		return nil, 0, false
	}
	id, err := strconv.ParseInt(uid, 10, 64)
	g := groups[no]
	return g, id, err == nil && g != nil
}

type orderTrade struct {
	orderID int64
	trade   string
}

// manualAlerted reports whether an admin was told about a refund in manual.
func (a *auditor) manualAlerted(r *refund) bool {
	for _, n := range a.l.notifications {
		if n.Kind != "refund_manual" {
			continue
		}
		for _, s := range []string{n.NotifyID, n.Subject, n.Message} {
			if strings.Contains(s, r.RefundNo) || strings.Contains(s, r.BaseNo) {
				return true
			}
		}
	}
	return false
}

// paymentOutcome: delivered xor refunded, for every trade. An operator's
// refunds of an order's own payment (reason operator, any number, in parts)
// are money out of a delivered trade too: they add up to at most the trade,
// and to the order's refunded_cents. Every other refund returns its whole
// trade, which was never delivered.
func (a *auditor) paymentOutcome(c *collector) {
	refunds := map[orderTrade][]*refund{}
	perOrder := map[int64][]*refund{}
	for i := range a.l.refunds {
		r := &a.l.refunds[i]
		refunds[orderTrade{r.OrderID, r.TradeNo}] = append(refunds[orderTrade{r.OrderID, r.TradeNo}], r)
		perOrder[r.OrderID] = append(perOrder[r.OrderID], r)
	}
	paid := map[orderTrade]*payment{}
	for i := range a.l.payments {
		p := &a.l.payments[i]
		paid[orderTrade{p.OrderID, p.TradeNo}] = p
		c.check()
		o := a.l.orders[p.OrderID]
		if o == nil {
			c.violation("trade %s paid for unknown order id %d", p.TradeNo, p.OrderID)
			continue
		}
		a.tradeOutcome(c, o, p, refunds[orderTrade{o.ID, p.TradeNo}])
	}
	for i := range a.l.refunds {
		r := &a.l.refunds[i]
		if paid[orderTrade{r.OrderID, r.TradeNo}] == nil {
			c.violation("refund %s returns trade %s of order %s, which the ledger never recorded as paid", r.RefundNo, r.TradeNo, r.OrderNo)
		}
	}
	for _, id := range sortedKeys(a.l.orders) {
		o := a.l.orders[id]
		rs := perOrder[o.ID]
		var ofPayment int64
		for _, r := range rs {
			if model.OfPayment(r.Reason) {
				ofPayment += r.AmountCents
			}
		}
		if o.RefundedCents != ofPayment || o.RefundedCents > o.AmountCents {
			c.violation("order %s: refunded_cents %d, its operator refunds add up to %d, it was paid %d", o.OrderNo, o.RefundedCents, ofPayment, o.AmountCents)
		}
		if o.Status != model.OrderRefunded {
			continue
		}
		// A free order (amount 0, never paid) is refunded with no money to return.
		free := o.AmountCents == 0 && !o.TradeNo.Valid
		if len(rs) == 0 && !free {
			c.violation("order %s is refunded but has no refund", o.OrderNo)
		}
		for _, r := range rs {
			if r.Status != model.RefundSucceeded {
				c.violation("order %s is refunded but its refund %s is %s", o.OrderNo, r.RefundNo, r.Status)
			}
		}
	}
}

// tradeOutcome checks one trade of order o against its refunds rs.
func (a *auditor) tradeOutcome(c *collector, o *order, p *payment, rs []*refund) {
	st := o.Status
	delivered := p.Disposition == model.PaymentApplied && st == model.OrderFinished &&
		o.TradeNo.Valid && o.TradeNo.String == p.TradeNo && len(a.l.effects[o.ID]) > 0
	var whole, done, out int64 // out: every refund, done: those at rest (money returned or with an operator)
	var flying bool
	var last *refund
	for _, r := range rs {
		last = r
		out += r.AmountCents
		switch {
		case r.Status == model.RefundSucceeded || r.Status == model.RefundManual && a.manualAlerted(r):
			done += r.AmountCents
		case r.Status == model.RefundProcessing && a.inFlightOK(r.UpdatedAt):
			flying = true
		}
		if !model.OfPayment(r.Reason) {
			whole++
			if r.AmountCents != p.AmountCents {
				c.violation("refund %s returns %d cents of trade %s which paid %d", r.RefundNo, r.AmountCents, p.TradeNo, p.AmountCents)
			}
		}
	}
	refunded := len(rs) > 0 && done == p.AmountCents
	inFlight := (st == model.OrderPaid || st == model.OrderClaimed || st == model.OrderRefunding) && a.inFlightOK(o.UpdatedAt) || flying
	switch {
	case out > p.AmountCents:
		c.violation("trade %s of order %s paid %d cents and its refunds return %d", p.TradeNo, o.OrderNo, p.AmountCents, out)
	case delivered && whole > 0:
		c.violation("trade %s of order %s was delivered AND refunded (refund %s %s)", p.TradeNo, o.OrderNo, last.RefundNo, last.Status)
	case !delivered && !refunded && !inFlight:
		c.violation("trade %s of order %s (%s, payment %s, %s) was neither delivered nor refunded", p.TradeNo, o.OrderNo,
			st, p.Disposition, refundState(last))
	}
}

func refundState(r *refund) string {
	switch {
	case r == nil:
		return "no refund"
	case r.Status == model.RefundManual:
		return "refund " + r.RefundNo + " manual without an admin alert"
	default:
		return "refund " + r.RefundNo + " " + r.Status.String()
	}
}

// FetchProvider reads the simulator's per-out_request_no refund counts.
func FetchProvider(ctx context.Context, baseURL string) (map[string]ProviderRefund, error) {
	c := &paysim.Client{BaseURL: strings.TrimRight(baseURL, "/"), HTTP: &http.Client{Timeout: 10 * time.Second}}
	st, err := c.Stats(ctx)
	if err != nil {
		return nil, fmt.Errorf("paysim stats: %w", err)
	}
	out := make(map[string]ProviderRefund, len(st.Refunds))
	for no, r := range st.Refunds {
		out[no] = ProviderRefund{Executed: r.Executed, Status: r.Status}
	}
	return out, nil
}

// baseNo strips an operator's generation suffix ("RF…-2" → "RF…").
func baseNo(no string) string {
	i := strings.LastIndexByte(no, '-')
	if i <= 0 {
		return no
	}
	if _, err := strconv.Atoi(no[i+1:]); err != nil {
		return no
	}
	return no[:i]
}

// providerRefund: money moved once per refund, and only for known refunds.
func (a *auditor) providerRefund(c *collector) {
	byBase := map[string]*refund{}
	for i := range a.l.refunds {
		byBase[a.l.refunds[i].BaseNo] = &a.l.refunds[i]
	}
	resolvedByHand := map[string]bool{}
	for _, e := range a.l.events {
		// An operator's resolve is the one way to succeeded the provider
		// did not confirm (refund.Service.Resolve records "operator resolved").
		if e.ObjectType == "refund" && e.From == model.RefundManual.String() && e.To == model.RefundSucceeded.String() && strings.Contains(e.Reason, "operator") {
			resolvedByHand[e.ObjectNo] = true
		}
	}
	moved := map[string][]string{}
	for _, no := range sortedKeys(a.opt.Provider) {
		pr := a.opt.Provider[no]
		c.check()
		if pr.Executed > 1 {
			c.violation("provider executed out_request_no %s %d times", no, pr.Executed)
		}
		if pr.Executed == 0 || pr.Status == paysim.StatusFailed {
			continue
		}
		base := baseNo(no)
		if byBase[base] == nil {
			c.violation("provider refunded out_request_no %s, which the ledger has no refund for", no)
			continue
		}
		moved[base] = append(moved[base], no)
	}
	for _, base := range sortedKeys(moved) {
		if nos := moved[base]; len(nos) > 1 {
			r := byBase[base]
			c.violation("trade %s of order %s refunded by the provider %d times: %v", r.TradeNo, r.OrderNo, len(nos), nos)
		}
	}
	for i := range a.l.refunds {
		r := &a.l.refunds[i]
		// A refund made at the provider (its dashboard) was recorded from
		// the provider's own statement, under no out_request_no of ours.
		if r.Status != model.RefundSucceeded || resolvedByHand[r.BaseNo] || r.Reason == model.RefundReasonProvider {
			continue
		}
		c.check()
		if pr := a.opt.Provider[r.RefundNo]; pr.Executed == 0 || pr.Status != paysim.StatusSucceeded {
			c.violation("ledger says refund %s succeeded, provider has it %q (executed %d)", r.RefundNo, pr.Status, pr.Executed)
		}
	}
}
