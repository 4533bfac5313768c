package console

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"orderflow/internal/domain/statement"
	"orderflow/internal/infra/metrics"
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
	Disputes      []disputeRow
	// Breaks are open statement breaks, oldest first (at most listLimit of
	// BreaksOpen); the Statements page resolves them.
	Breaks        []row
	BreaksOpen    int
	OutboxBacklog int64
	OutboxAge     time.Duration
	Sweep         *metrics.SweepPass
	SweepAge      time.Duration
	// Behind: the outbox's oldest row waits longer than a minute (the relay
	// sends at once after commit; its poller within seconds), or the last
	// sweep pass started more than three intervals ago.
	OutboxBehind, SweepBehind bool
}

// disputeRow is an open dispute: Row's Reason is the provider's reason
// and the flag, DueBy when its evidence must reach the provider.
type disputeRow struct {
	row
	DueBy *time.Time
	Flag  string
}

// needs is the console's home: everything the system cannot finish alone.
func (c *Console) needs(w http.ResponseWriter, r *http.Request) {
	showView(c, w, r, "needs", "Needs a hand", c.needsView)
}

func (c *Console) needsView(ctx context.Context) (*needsView, error) {
	n, err := c.uc.Backlog.Needs(ctx, listLimit)
	if err != nil {
		return nil, err
	}
	v := &needsView{OutboxBacklog: n.OutboxBacklog, OutboxAge: n.OutboxAge, Sweep: n.Sweep}
	for _, o := range n.FailedOrders {
		v.FailedOrders = append(v.FailedOrders, row{No: o.OrderNo, Age: c.since(o.UpdatedAt), Reason: n.OrderReasons[o.OrderNo],
			Detail: fmt.Sprintf("%s × %d, %s, %d attempts", o.Kind, o.Quantity, money(o.AmountCents), o.Attempts)})
	}
	for _, x := range n.ManualRefunds {
		reason := n.RefundReasons[x.BaseNo]
		if x.LastError != "" {
			reason += " — " + x.LastError
		}
		v.ManualRefunds = append(v.ManualRefunds, row{No: x.RefundNo, Age: c.since(x.UpdatedAt), Reason: reason,
			Detail: fmt.Sprintf("order %s, %s, %s, provider says %q", x.OrderNo, money(x.AmountCents), x.Reason, x.ProviderStatus)})
	}
	for _, g := range n.FailedGroups {
		v.FailedGroups = append(v.FailedGroups, row{No: g.GroupNo, Age: c.since(g.UpdatedAt), Reason: g.FailureReason,
			Detail: fmt.Sprintf("%q, %s each", g.Title, money(g.PriceCents))})
	}
	for _, x := range n.FailingNotices {
		v.Notifications = append(v.Notifications, row{No: x.NotifyID, Age: c.since(x.CreatedAt), Reason: x.LastError,
			Detail: fmt.Sprintf("%s to %s: %s (%d attempts)", x.Kind, x.Recipient, x.Subject, x.Attempts)})
	}
	for _, h := range n.Held {
		v.Held = append(v.Held, row{No: h.OrderNo, Age: c.since(h.CreatedAt),
			Reason: "trade " + h.TradeNo + " already pays order " + h.PaidOrderNo, Detail: money(h.AmountCents)})
	}
	for _, d := range n.OpenDisputes {
		v.Disputes = append(v.Disputes, disputeRow{DueBy: d.EvidenceDueBy, Flag: d.Flag,
			row: row{No: d.OrderNo, Age: c.since(d.CreatedAt), Reason: d.Reason,
				Detail: fmt.Sprintf("%s %s, %s, %s", d.Provider, d.DisputeID, money(d.AmountCents), d.Status)}})
	}
	breaks, err := c.uc.Statements.Breaks(ctx, string(statement.BreakOpen), "")
	if err != nil {
		return nil, err
	}
	v.BreaksOpen = len(breaks)
	for _, b := range breaks[:min(len(breaks), listLimit)] {
		v.Breaks = append(v.Breaks, row{No: strconv.FormatInt(b.ID, 10), Age: c.since(b.CreatedAt), Reason: b.Action,
			Detail: fmt.Sprintf("%s %s of %s, %s (provider %s, ledger %s)", b.Provider, b.Kind, b.Day, b.Ref,
				moneyOr(b.ProviderAmountCents), moneyOr(b.LedgerAmountCents))})
	}
	v.OutboxBehind = v.OutboxAge > time.Minute
	if v.Sweep != nil {
		v.SweepAge = c.since(v.Sweep.StartedAt)
		v.SweepBehind = v.SweepAge > 3*time.Duration(c.sc.Config.SweepInterval)
	}
	return v, nil
}

func money(cents int64) string { return fmt.Sprintf("%d.%02d", cents/100, cents%100) }

// moneyOr is an optional amount, "—" when absent.
func moneyOr(cents *int64) string {
	if cents == nil {
		return "—"
	}
	return money(*cents)
}
