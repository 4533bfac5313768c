package audit

import (
	"database/sql"
	"slices"
	"strconv"
	"strings"
	"time"

	"orderflow/model"
)

// orderSettled: terminal, or pending before expiry + grace.
func (a *auditor) orderSettled(c *collector) {
	for _, id := range sortedKeys(a.l.orders) {
		o := a.l.orders[id]
		c.check()
		switch st := o.Status; {
		case model.OrderMachine.Terminal(st):
		case st == model.OrderPending:
			if late := a.now.Sub(o.ExpireAt); late > a.opt.Grace {
				c.violation("order %s pending %s past its expiry (grace %s): its close never ran", o.OrderNo, round(late), a.opt.Grace)
			}
		case st == model.OrderPaid, st == model.OrderClaimed, st == model.OrderRefunding:
			if !a.inFlightOK(o.UpdatedAt) {
				c.violation("order %s still %s (last moved %s ago): nothing at rest may wait", o.OrderNo, st, round(a.now.Sub(o.UpdatedAt)))
			}
		default:
			c.violation("order %s has unknown status %d", o.OrderNo, o.Status)
		}
	}
}

// holdsLockedKeys: the statuses whose card keys may still be LOCKED — the
// order may yet be delivered (or, failed, retried or refunded by an operator).
var holdsLockedKeys = map[model.OrderStatus]bool{
	model.OrderPending: true, model.OrderPaid: true, model.OrderClaimed: true, model.OrderFailed: true,
}

// cardKeyOwner: each key's status agrees with the order it names.
func (a *auditor) cardKeyOwner(c *collector) {
	for _, k := range a.l.keys {
		c.check()
		var o *order
		if k.OrderID.Valid {
			o = a.l.orders[k.OrderID.Int64]
		}
		ref := "key #" + strconv.FormatInt(k.ID, 10)
		switch k.Status {
		case model.CardSold:
			switch {
			case o == nil:
				c.violation("%s SOLD to no order (order_id %v)", ref, nullInt(k.OrderID))
			case o.Status != model.OrderFinished:
				c.violation("%s SOLD to order %s which is %s, not finished", ref, o.OrderNo, o.Status)
			case o.ProductID != k.ProductID:
				c.violation("%s of product %d SOLD to order %s of product %d", ref, k.ProductID, o.OrderNo, o.ProductID)
			}
		case model.CardRecycled, model.CardUnsold:
			if o != nil && o.Status == model.OrderFinished {
				c.violation("%s is %s but belongs to finished order %s: a delivered key is for sale again", ref, k.Status, o.OrderNo)
			}
		case model.CardLocked:
			switch {
			case o == nil:
				c.violation("%s LOCKED by no order (order_id %v): locked forever", ref, nullInt(k.OrderID))
			case !holdsLockedKeys[o.Status]:
				c.violation("%s LOCKED by order %s which is %s: locked forever", ref, o.OrderNo, o.Status)
			}
		default:
			c.violation("%s has unknown status %q", ref, k.Status)
		}
	}
}

// cardOrderKeys: each card order holds the number of keys its status says.
func (a *auditor) cardOrderKeys(c *collector) {
	type counts struct{ sold, locked int }
	held := map[int64]*counts{}
	for _, k := range a.l.keys {
		if !k.OrderID.Valid {
			continue
		}
		n := held[k.OrderID.Int64]
		if n == nil {
			n = &counts{}
			held[k.OrderID.Int64] = n
		}
		switch k.Status {
		case model.CardSold:
			n.sold++
		case model.CardLocked:
			n.locked++
		}
	}
	for _, id := range sortedKeys(a.l.orders) {
		o := a.l.orders[id]
		if o.Kind != string(model.KindCard) {
			continue
		}
		c.check()
		n := held[o.ID]
		if n == nil {
			n = &counts{}
		}
		st := o.Status
		switch st {
		case model.OrderFinished:
			if n.sold != o.Quantity || n.locked != 0 {
				c.violation("finished order %s (quantity %d) has %d SOLD and %d LOCKED keys", o.OrderNo, o.Quantity, n.sold, n.locked)
			}
		case model.OrderPending, model.OrderPaid:
			if n.locked != o.Quantity || n.sold != 0 {
				c.violation("%s order %s (quantity %d) has %d LOCKED and %d SOLD keys", st, o.OrderNo, o.Quantity, n.locked, n.sold)
			}
		case model.OrderClaimed, model.OrderFailed:
			// The effect may have sold them before the finalize.
			if n.locked+n.sold != o.Quantity || (n.locked != 0 && n.sold != 0) {
				c.violation("%s order %s (quantity %d) has %d LOCKED and %d SOLD keys", st, o.OrderNo, o.Quantity, n.locked, n.sold)
			}
		default:
			if n.locked != 0 || n.sold != 0 {
				c.violation("%s order %s still has %d LOCKED and %d SOLD keys", st, o.OrderNo, n.locked, n.sold)
			}
		}
	}
}

// orderEffect: an effect row (and a recharge's wallet credit) iff finished.
func (a *auditor) orderEffect(c *collector) {
	credits := map[string][]walletEntry{}
	for _, e := range a.l.entries {
		if no, ok := strings.CutPrefix(e.Ref, "order:"); ok {
			credits[no] = append(credits[no], e)
		}
	}
	for _, id := range sortedKeys(a.l.orders) {
		o := a.l.orders[id]
		c.check()
		effs := a.l.effects[o.ID]
		finished := o.Status == model.OrderFinished
		switch {
		case finished && (len(effs) != 1 || effs[0] != o.Kind):
			c.violation("finished %s order %s has effects %v, want exactly [%s]", o.Kind, o.OrderNo, effs, o.Kind)
		case !finished && len(effs) > 0:
			c.violation("order %s is %s but its effect %v was applied", o.OrderNo, o.Status, effs)
		}
		cr := credits[o.OrderNo]
		if o.Kind == string(model.KindRecharge) && finished {
			p := a.l.products[o.ProductID]
			switch {
			case len(cr) != 1:
				c.violation("finished recharge order %s credited %d times, want once", o.OrderNo, len(cr))
			case p != nil && cr[0].AmountCents != p.CreditCents*int64(o.Quantity):
				c.violation("recharge order %s credited %d cents, want %d × %d", o.OrderNo, cr[0].AmountCents, p.CreditCents, o.Quantity)
			}
		} else if len(cr) > 0 {
			c.violation("%s %s order %s has %d wallet credit(s)", o.Status, o.Kind, o.OrderNo, len(cr))
		}
	}
	for _, id := range sortedKeys(a.l.effects) {
		if a.l.orders[id] == nil {
			c.violation("effect %v recorded for unknown order id %d", a.l.effects[id], id)
		}
	}
}

// stockFlow: the flows an order's history implies, each of its quantity.
func (a *auditor) stockFlow(c *collector) {
	for _, id := range sortedKeys(a.l.orders) {
		o := a.l.orders[id]
		c.check()
		st := o.Status
		want := map[model.FlowKind]bool{
			model.FlowLock:          true,
			model.FlowSell:          o.Kind == string(model.KindCard) && st == model.OrderFinished,
			model.FlowCloseRestore:  o.ClosedAt.Valid,
			model.FlowRefundRestore: (st == model.OrderRefunding || st == model.OrderRefunded) && !o.ClosedAt.Valid,
		}
		have := map[model.FlowKind]int{}
		for _, f := range a.l.flows[o.ID] {
			have[f.FlowType]++
			if f.Quantity != o.Quantity {
				c.violation("order %s flow type %d moved %d, order quantity %d", o.OrderNo, f.FlowType, f.Quantity, o.Quantity)
			}
		}
		for _, t := range model.FlowKinds {
			switch {
			case want[t] && have[t] != 1:
				c.violation("%s %s order %s has %d flow(s) of type %d (%s), want 1", o.Status, o.Kind, o.OrderNo, have[t], t, t)
			case !want[t] && have[t] > 0:
				c.violation("%s %s order %s has a flow of type %d (%s) it should not", o.Status, o.Kind, o.OrderNo, t, t)
			}
		}
		for t := range have {
			if !slices.Contains(model.FlowKinds, t) {
				c.violation("order %s has a flow of unknown type %d", o.OrderNo, t)
			}
		}
	}
	for _, id := range sortedKeys(a.l.flows) {
		if a.l.orders[id] == nil {
			c.violation("stock flow recorded for unknown order id %d", id)
		}
	}
}

// pendingSlots: the per-buyer pending counter matches the ledger.
func (a *auditor) pendingSlots(c *collector) {
	pending := map[int64]int{}
	for _, o := range a.l.orders {
		if o.Status == model.OrderPending {
			pending[o.UserID]++
		}
	}
	for _, id := range sortedKeys(a.l.users) {
		u := a.l.users[id]
		c.check()
		if u.PendingOrders != pending[id] {
			c.violation("user %d counts %d pending orders, ledger has %d", id, u.PendingOrders, pending[id])
		}
	}
}

// outboxDrained: nothing left for the relay.
func (a *auditor) outboxDrained(c *collector) {
	c.check() // the outbox itself, so an empty one still counts as checked
	for _, r := range a.l.outbox {
		c.check()
		if !a.inFlightOK(r.CreatedAt) {
			c.violation("outbox task %s waiting since %s", r.TaskID, r.CreatedAt.Format(time.RFC3339Nano))
		}
	}
}

func nullInt(n sql.NullInt64) string {
	if !n.Valid {
		return "NULL"
	}
	return strconv.FormatInt(n.Int64, 10)
}

func round(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
