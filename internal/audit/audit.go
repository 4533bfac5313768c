// Package audit checks a whole orderflow ledger against the promises the
// system makes: no order, payment, card key or wallet cent lost or doubled,
// every status change an allowed move, nothing left waiting on a task that
// will never run. Each check is a named rule; Run returns how many
// violations each rule found, with a few examples, and Report.Print renders
// them as a table.
//
// The audit is meant for a ledger at rest (after the chaos run has healed
// and quiesced, or an operator's maintenance window): anything in flight —
// a paid order, a processing refund, an outbox row — is a violation unless
// Options.InFlightGrace tolerates recent ones. It only reads: the database
// through its own read-only queries (the audit is not product code, so its
// SQL lives here and not in model), Redis counters with GET, and the payment
// simulator's /admin/stats.
package audit

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"time"

	"github.com/redis/go-redis/v9"
)

// The rules, in the order they are reported.
const (
	// RuleOrderSettled: every order is terminal or legitimately waiting — a
	// pending order before its expiry plus the grace; nothing paid, claimed
	// or refunding at rest.
	RuleOrderSettled = "order-settled"
	// RuleCardKeyOwner: SOLD keys belong to finished orders only; RECYCLED
	// and UNSOLD keys are not a finished order's; LOCKED keys are held only
	// by an order that may still use or release them (pending, paid,
	// claimed, failed).
	RuleCardKeyOwner = "card-key-owner"
	// RuleCardOrderKeys: each finished card order holds exactly its
	// quantity of SOLD keys.
	RuleCardOrderKeys = "card-order-keys"
	// RuleOrderEffect: one order_effects row per finished order (its kind),
	// none for any other order; a finished recharge credited its wallet once
	// with credit × quantity.
	RuleOrderEffect = "order-effect"
	// RuleWalletBalance: each balance equals the sum of the user's wallet
	// entries, and every entry has a source: the opening balance, a finished
	// recharge order, or a settled group's charge.
	RuleWalletBalance = "wallet-balance"
	// RulePaymentOutcome: each payment (trade) is delivered (its order
	// finished with that trade and the effect applied) or refunded (its
	// refund succeeded, or is in manual with a refund_manual alert) — never
	// both, never neither; every refund belongs to a recorded payment of the
	// same amount; a refunded order has only succeeded refunds.
	RulePaymentOutcome = "payment-outcome"
	// RuleProviderRefund: the provider moved money at most once per
	// refund_no and at most once per (order, trade) across refund_no
	// generations, never for a refund the ledger does not know, and did move
	// it for every refund the ledger calls succeeded (unless an operator
	// resolved it by hand, or it was made at the provider and learned from
	// its statement). Needs the simulator's stats.
	RuleProviderRefund = "provider-refund-once"
	// RuleEventMoves: every event's from→to is an allowed move for its
	// object type; creation events come from "-" into the initial status.
	RuleEventMoves = "event-moves"
	// RuleEventHistory: each object's events chain (every from is the
	// previous to), start with a creation event and end in its current status.
	RuleEventHistory = "event-history"
	// RuleStockFlow: each order has its lock flow; a sell flow iff it is a
	// finished card order; a close-restore flow iff it was closed; a
	// refund-restore flow iff an operator refunded it after failing.
	RuleStockFlow = "stock-flow"
	// RuleStockCounter: each Redis stock counter that exists equals the
	// database's sellable count. Needs Redis.
	RuleStockCounter = "stock-counter"
	// RulePendingSlots: each buyer's pending-order counter equals their
	// number of pending orders.
	RulePendingSlots = "pending-slots"
	// RuleGroupSettlement: every group past its deadline is SETTLED (every
	// participant charged once, by one charge entry of the price) or FAILED
	// (nobody charged, a group_failed notification written).
	RuleGroupSettlement = "group-settlement"
	// RuleOutboxDrained: the outbox is empty.
	RuleOutboxDrained = "outbox-drained"
)

// Rules lists every rule in report order.
var Rules = []string{
	RuleOrderSettled, RuleCardKeyOwner, RuleCardOrderKeys, RuleOrderEffect, RuleWalletBalance,
	RulePaymentOutcome, RuleProviderRefund, RuleEventMoves, RuleEventHistory, RuleStockFlow,
	RuleStockCounter, RulePendingSlots, RuleGroupSettlement, RuleOutboxDrained, RuleDisputeMoney,
	RuleStatementBreaks,
}

// maxExamples bounds the examples kept per rule; the count is always exact.
const maxExamples = 5

// Options say what to audit and how strictly.
type Options struct {
	// DB is the ledger (required). Open it with Open for the right session
	// settings (UTC, parsed times).
	DB *sql.DB
	// Redis holds the stock counters; nil skips RuleStockCounter.
	Redis redis.UniversalClient
	// Provider is the simulator's view of refunds (FetchProvider); nil skips
	// RuleProviderRefund.
	Provider map[string]ProviderRefund
	// Grace is how long past its expiry a pending order (and past its
	// deadline an OPEN/CLOSED group) may still wait for its close task or
	// reconciliation.
	Grace time.Duration
	// InFlightGrace, when positive, tolerates in-flight objects updated more
	// recently than this: paid/claimed/refunding orders, processing refunds
	// and outbox rows. Zero audits a ledger at rest: none tolerated.
	InFlightGrace time.Duration
	// Planted lists the statement differences a run planted on purpose;
	// nil skips RuleStatementBreaks (an operator's ledger has open breaks
	// to work on), an empty list allows no break at all.
	Planted []PlantedBreak
}

// ProviderRefund is what the payment provider knows about one out_request_no.
type ProviderRefund struct {
	// Executed is how many times the provider moved money for it.
	Executed int
	// Status is processing, succeeded or failed ("" if never applied).
	Status string
}

// Result is one rule's outcome.
type Result struct {
	Rule string
	// Checked is how many objects the rule looked at.
	Checked int
	// Violations is the exact number of violations found.
	Violations int
	// Examples describe up to maxExamples violations.
	Examples []string
	// Skipped says why the rule did not run ("" if it ran).
	Skipped string
}

// Run loads the ledger and applies every rule.
func Run(ctx context.Context, opt Options) (*Report, error) {
	if opt.DB == nil {
		return nil, fmt.Errorf("audit: no database")
	}
	l, err := load(ctx, opt.DB)
	if err != nil {
		return nil, fmt.Errorf("audit: load ledger: %w", err)
	}
	a := &auditor{opt: opt, l: l, now: l.now}
	rep := &Report{At: l.now}
	for _, rule := range Rules {
		res := Result{Rule: rule, Skipped: skipReason(rule, opt)}
		if res.Skipped == "" {
			if err := ruleChecks[rule](a, ctx, &collector{res: &res}); err != nil {
				return nil, fmt.Errorf("audit: %s: %w", rule, err)
			}
		}
		rep.Results = append(rep.Results, res)
	}
	return rep, nil
}

// ruleCheck applies one rule to the loaded ledger.
type ruleCheck func(a *auditor, ctx context.Context, c *collector) error

// ruleChecks is the check behind each of Rules.
var ruleChecks = map[string]ruleCheck{
	RuleOrderSettled:    ledgerOnly((*auditor).orderSettled),
	RuleCardKeyOwner:    ledgerOnly((*auditor).cardKeyOwner),
	RuleCardOrderKeys:   ledgerOnly((*auditor).cardOrderKeys),
	RuleOrderEffect:     ledgerOnly((*auditor).orderEffect),
	RuleWalletBalance:   ledgerOnly((*auditor).walletBalance),
	RulePaymentOutcome:  ledgerOnly((*auditor).paymentOutcome),
	RuleProviderRefund:  ledgerOnly((*auditor).providerRefund),
	RuleEventMoves:      ledgerOnly((*auditor).eventMoves),
	RuleEventHistory:    ledgerOnly((*auditor).eventHistory),
	RuleStockFlow:       ledgerOnly((*auditor).stockFlow),
	RuleStockCounter:    (*auditor).stockCounter,
	RulePendingSlots:    ledgerOnly((*auditor).pendingSlots),
	RuleGroupSettlement: ledgerOnly((*auditor).groupSettlement),
	RuleOutboxDrained:   ledgerOnly((*auditor).outboxDrained),
	RuleDisputeMoney:    ledgerOnly((*auditor).disputeMoney),
	RuleStatementBreaks: ledgerOnly((*auditor).statementBreaks),
}

// ledgerOnly adapts a check that reads nothing but the loaded ledger.
func ledgerOnly(f func(*auditor, *collector)) ruleCheck {
	return func(a *auditor, _ context.Context, c *collector) error { f(a, c); return nil }
}

// skipReason says why a rule cannot run with the inputs given ("" when it can).
func skipReason(rule string, opt Options) string {
	switch {
	case rule == RuleProviderRefund && opt.Provider == nil:
		return "no provider stats (-paysim)"
	case rule == RuleStockCounter && opt.Redis == nil:
		return "no Redis (-redis)"
	case rule == RuleStatementBreaks && opt.Planted == nil:
		return "no planted statement breaks (a chaos run's statement step)"
	}
	return ""
}

// collector counts one rule's checks and violations.
type collector struct{ res *Result }

func (c *collector) check() { c.res.Checked++ }

func (c *collector) violation(format string, args ...any) {
	c.res.Violations++
	if len(c.res.Examples) < maxExamples {
		c.res.Examples = append(c.res.Examples, fmt.Sprintf(format, args...))
	}
}

// auditor applies the rules to one loaded ledger.
type auditor struct {
	opt Options
	l   *ledger
	now time.Time
}

// inFlightOK reports whether an object last touched at t may still be in flight.
func (a *auditor) inFlightOK(t time.Time) bool {
	return a.opt.InFlightGrace > 0 && a.now.Sub(t) < a.opt.InFlightGrace
}

func sortedKeys[K ~int64 | ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}
