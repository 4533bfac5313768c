package audit

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"orderflow/internal/infra/stock"
	"orderflow/model"

	"github.com/redis/go-redis/v9"
)

// tables are the product's transition tables (model/transitions.go) by the
// object type events name: the audit checks the history against the very
// tables the moves were checked against.
var tables = func() map[string]model.Table {
	out := map[string]model.Table{}
	for _, t := range model.Tables() {
		out[t.Object] = t
	}
	return out
}()

// allowedMove reports whether from→to is a move the product's transition
// tables allow for the object type (creation: "-" → the initial status).
func allowedMove(objectType, from, to string) (bool, bool) {
	t, known := tables[objectType]
	if !known {
		return false, false
	}
	if from == "-" {
		return to == t.Initial, true
	}
	return t.Allows(from, to), true
}

// eventMoves: every recorded move is allowed (a note, which records an
// operator's look without a move, is no move).
func (a *auditor) eventMoves(c *collector) {
	for _, e := range a.l.events {
		c.check()
		if _, known := tables[e.ObjectType]; known && model.IsNote(e.From, e.To, e.Reason) {
			continue
		}
		ok, known := allowedMove(e.ObjectType, e.From, e.To)
		switch {
		case !known:
			c.violation("event #%d has unknown object type %q", e.ID, e.ObjectType)
		case !ok:
			c.violation("event #%d: %s %s moved %s→%s (%q), not an allowed move", e.ID, e.ObjectType, e.ObjectNo, e.From, e.To, e.Reason)
		}
	}
}

type objectKey struct{ typ, no string }

// eventHistory: each object's events form one chain from its creation to
// its current status.
func (a *auditor) eventHistory(c *collector) {
	byObject := map[objectKey][]event{}
	for _, e := range a.l.events {
		k := objectKey{e.ObjectType, e.ObjectNo}
		byObject[k] = append(byObject[k], e)
	}
	current := map[objectKey]string{}
	for _, o := range a.l.orders {
		current[objectKey{"order", o.OrderNo}] = o.Status.String()
	}
	for _, r := range a.l.refunds {
		current[objectKey{"refund", r.BaseNo}] = r.Status.String()
	}
	for _, g := range a.l.groups {
		current[objectKey{"group", g.GroupNo}] = g.Status.String()
	}
	keys := make([]string, 0, len(current))
	index := map[string]objectKey{}
	for k := range current {
		s := k.typ + " " + k.no
		keys = append(keys, s)
		index[s] = k
	}
	sort.Strings(keys)
	for _, s := range keys {
		k := index[s]
		c.check()
		evs := byObject[k]
		if len(evs) == 0 {
			c.violation("%s has no event history", s)
			continue
		}
		if evs[0].From != "-" {
			c.violation("%s history starts with %s→%s, not its creation", s, evs[0].From, evs[0].To)
		}
		for i := 1; i < len(evs); i++ {
			if evs[i].From != evs[i-1].To {
				c.violation("%s history breaks at event #%d: %s→%s follows →%s", s, evs[i].ID, evs[i].From, evs[i].To, evs[i-1].To)
			}
		}
		if last := evs[len(evs)-1].To; last != current[k] {
			c.violation("%s is %s but its history ends in %s", s, current[k], last)
		}
	}
	var orphans []string
	for k, evs := range byObject {
		if _, ok := current[k]; !ok {
			orphans = append(orphans, fmt.Sprintf("%d event(s) for unknown %s %s", len(evs), k.typ, k.no))
		}
	}
	sort.Strings(orphans)
	for _, o := range orphans {
		c.violation("%s", o)
	}
}

// groupSettlement: SETTLED charged everyone once, FAILED nobody (and said so).
func (a *auditor) groupSettlement(c *collector) {
	charges := map[string][]walletEntry{} // group_no → its charge entries
	for _, e := range a.l.entries {
		if rest, ok := strings.CutPrefix(e.Ref, "group:"); ok {
			if no, _, ok := strings.Cut(rest, ":user:"); ok {
				charges[no] = append(charges[no], e)
			}
		}
	}
	alerted := map[string]bool{}
	for _, n := range a.l.notifications {
		if n.Kind != "group_failed" {
			continue
		}
		for _, g := range a.l.groups {
			if strings.Contains(n.NotifyID, g.GroupNo) || strings.Contains(n.Subject, g.GroupNo) {
				alerted[g.GroupNo] = true
			}
		}
	}
	for _, g := range a.l.groups {
		c.check()
		members := a.l.participants[g.ID]
		entries := map[int64][]walletEntry{}
		for _, e := range charges[g.GroupNo] {
			entries[e.UserID] = append(entries[e.UserID], e)
		}
		member := map[int64]bool{}
		charged := 0
		for _, p := range members {
			member[p.UserID] = true
			if p.Charged {
				charged++
			}
		}
		for _, uid := range sortedKeys(entries) {
			if !member[uid] {
				c.violation("group %s charged user %d, who is not a participant", g.GroupNo, uid)
			}
		}
		switch g.Status {
		case model.GroupSettled:
			for _, p := range members {
				es := entries[p.UserID]
				switch {
				case !p.Charged:
					c.violation("group %s SETTLED but participant %d is not marked charged", g.GroupNo, p.UserID)
				case len(es) != 1:
					c.violation("group %s SETTLED: participant %d has %d charge entries, want 1", g.GroupNo, p.UserID, len(es))
				case es[0].AmountCents != -g.PriceCents:
					c.violation("group %s SETTLED: participant %d charged %d cents, price %d", g.GroupNo, p.UserID, -es[0].AmountCents, g.PriceCents)
				}
			}
		case model.GroupFailed:
			if charged > 0 || len(charges[g.GroupNo]) > 0 {
				c.violation("group %s FAILED but %d participant(s) charged, %d charge entries", g.GroupNo, charged, len(charges[g.GroupNo]))
			}
			if !alerted[g.GroupNo] {
				c.violation("group %s FAILED without a group_failed notification", g.GroupNo)
			}
		case model.GroupOpen, model.GroupClosed:
			if late := a.now.Sub(g.Deadline); late > a.opt.Grace && !a.inFlightOK(g.UpdatedAt) {
				c.violation("group %s still %s %s past its deadline", g.GroupNo, g.Status, round(late))
			}
			if charged > 0 || len(charges[g.GroupNo]) > 0 {
				c.violation("group %s is %s but %d participant(s) already charged", g.GroupNo, g.Status, charged)
			}
		default:
			c.violation("group %s has unknown status %q", g.GroupNo, g.Status)
		}
	}
}

// stockCounter: an existing Redis counter equals the ledger's sellable count.
func (a *auditor) stockCounter(ctx context.Context, c *collector) error {
	sellable := map[int64]int64{}
	for _, k := range a.l.keys {
		if k.Status == model.CardUnsold || k.Status == model.CardRecycled {
			sellable[k.ProductID]++
		}
	}
	for _, id := range sortedKeys(a.l.products) {
		p := a.l.products[id]
		var want int64
		switch {
		case p.Kind == string(model.KindCard):
			want = sellable[id]
		case p.Stock.Valid:
			want = p.Stock.Int64
		default:
			continue // unlimited: no counter
		}
		c.check()
		got, err := a.opt.Redis.Get(ctx, stock.Key(id)).Int64()
		if errors.Is(err, redis.Nil) {
			continue // missing is fine: rebuilt from the ledger on demand
		}
		if err != nil {
			return err
		}
		if got != want {
			c.violation("product %d (%s): Redis counter %s = %d, ledger has %d sellable", id, p.Kind, stock.Key(id), got, want)
		}
	}
	return nil
}
