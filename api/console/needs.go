package console

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"orderflow/internal/infra/metrics"
	"orderflow/model"
)

// listLimit bounds every list on a page: the newest rows, each an index walk.
const listLimit = 50

// row is one thing that needs a hand: its number, how long it has waited,
// and the reason from its last event (or its last error).
type row struct {
	No     string
	Detail string
	Age    time.Duration
	Reason string
}

type needsView struct {
	Error         string
	FailedOrders  []row
	ManualRefunds []row
	FailedGroups  []row
	Notifications []row
	Held          []row
	OutboxBacklog int64
	OutboxAge     time.Duration
	Sweep         *metrics.SweepPass
	SweepAge      time.Duration
	// Behind: the outbox's oldest row waits longer than a minute (the relay
	// sends at once after commit; its poller within seconds), or the last
	// sweep pass started more than three intervals ago.
	OutboxBehind, SweepBehind bool
}

// needs is the console's home: everything the system cannot finish alone.
func (c *Console) needs(w http.ResponseWriter, r *http.Request) {
	v, err := c.needsView(r.Context())
	if c.failed(w, r, err) {
		return
	}
	c.render(w, r, http.StatusOK, "needs", "Needs a hand", v)
}

func (c *Console) needsView(ctx context.Context) (*needsView, error) {
	st := c.sc.Store
	v := &needsView{}
	orders, err := st.OrdersInStatusLatest(ctx, model.OrderFailed, listLimit)
	if err != nil {
		return nil, fmt.Errorf("failed orders: %w", err)
	}
	nos := make([]string, 0, len(orders))
	for _, o := range orders {
		nos = append(nos, o.OrderNo)
	}
	last, err := st.LastEvents(ctx, "order", nos)
	if err != nil {
		return nil, fmt.Errorf("failed orders' events: %w", err)
	}
	for _, o := range orders {
		v.FailedOrders = append(v.FailedOrders, row{No: o.OrderNo, Age: c.since(o.UpdatedAt), Reason: last[o.OrderNo].Reason,
			Detail: fmt.Sprintf("%s × %d, %s, %d attempts", o.Kind, o.Quantity, money(o.AmountCents), o.Attempts)})
	}

	refunds, err := st.RefundsInStatusLatest(ctx, model.RefundManual, listLimit)
	if err != nil {
		return nil, fmt.Errorf("manual refunds: %w", err)
	}
	nos = nos[:0]
	for _, x := range refunds {
		nos = append(nos, x.BaseNo)
	}
	if last, err = st.LastEvents(ctx, "refund", nos); err != nil {
		return nil, fmt.Errorf("manual refunds' events: %w", err)
	}
	for _, x := range refunds {
		reason := last[x.BaseNo].Reason
		if x.LastError != "" {
			reason += " — " + x.LastError
		}
		v.ManualRefunds = append(v.ManualRefunds, row{No: x.RefundNo, Age: c.since(x.UpdatedAt), Reason: reason,
			Detail: fmt.Sprintf("order %s, %s, %s, provider says %q", x.OrderNo, money(x.AmountCents), x.Reason, x.ProviderStatus)})
	}

	groups, err := st.GroupsInStatus(ctx, model.GroupFailed, listLimit)
	if err != nil {
		return nil, fmt.Errorf("failed groups: %w", err)
	}
	for _, g := range groups {
		v.FailedGroups = append(v.FailedGroups, row{No: g.GroupNo, Age: c.since(g.UpdatedAt), Reason: g.FailureReason,
			Detail: fmt.Sprintf("%q, %s each", g.Title, money(g.PriceCents))})
	}

	notes, err := st.FailingNotifications(ctx, listLimit)
	if err != nil {
		return nil, fmt.Errorf("failing notifications: %w", err)
	}
	for _, n := range notes {
		v.Notifications = append(v.Notifications, row{No: n.NotifyID, Age: c.since(n.CreatedAt), Reason: n.LastError,
			Detail: fmt.Sprintf("%s to %s: %s (%d attempts)", n.Kind, n.Recipient, n.Subject, n.Attempts)})
	}

	held, err := st.LatestHeldPayments(ctx, listLimit)
	if err != nil {
		return nil, fmt.Errorf("held payments: %w", err)
	}
	for _, h := range held {
		v.Held = append(v.Held, row{No: h.OrderNo, Age: c.since(h.CreatedAt),
			Reason: "trade " + h.TradeNo + " already pays order " + h.PaidOrderNo, Detail: money(h.AmountCents)})
	}

	if v.OutboxBacklog, v.OutboxAge, err = st.OutboxBacklog(ctx, c.sc.Clock.Now()); err != nil {
		return nil, fmt.Errorf("outbox backlog: %w", err)
	}
	v.OutboxBehind = v.OutboxAge > time.Minute
	if v.Sweep, err = metrics.LastSweep(ctx, c.sc.Redis); err == nil && v.Sweep != nil {
		v.SweepAge = c.since(v.Sweep.StartedAt)
		v.SweepBehind = v.SweepAge > 3*time.Duration(c.sc.Config.SweepInterval)
	}
	return v, nil
}

func money(cents int64) string { return fmt.Sprintf("%d.%02d", cents/100, cents%100) }
