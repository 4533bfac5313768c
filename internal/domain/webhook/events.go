package webhook

// events is which ledger happening causes which shop event (SPEC "Shop
// webhooks"): the status moves SPEC names, keyed by the machine's object
// and status names, and two happenings that are not moves — a new dispute
// and a new statement break — keyed with an empty "from". A move not here
// (a claim, a release, an operator's order retry) sends nothing. The
// ledger asks EventFor inside the move's transaction (svc installs it with
// model.Store.SetWebhooks), so a committed move always has its event.
var events = map[[3]string]string{
	{"order", "pending", "paid"}:       "order.paid",
	{"order", "claimed", "finished"}:   "order.finished",
	{"order", "pending", "closed"}:     "order.closed",
	{"order", "refunding", "refunded"}: "order.refunded",
	{"refund", "processing", "manual"}: "refund.manual",
	{"group", "closed", "settled"}:     "group.settled",
	{"group", "failed", "settled"}:     "group.settled", // an operator's retry
	{"group", "closed", "failed"}:      "group.failed",
	{"dispute", "", "opened"}:          "order.disputed",
	{"statement_break", "", "open"}:    "statement.break",
}

// EventFor names the event that object moving from → to causes, or "".
func EventFor(object, from, to string) string {
	return events[[3]string{object, from, to}]
}
