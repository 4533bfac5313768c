package chaos

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"orderflow/internal/audit"
)

// Report is the outcome of a run.
type Report struct {
	Seed     int64
	Short    bool
	HA       bool
	Provider string
	Workload time.Duration
	Workers  int
	// Faults counts injections per kind; FaultLog lists them in order.
	Faults   map[string]int
	FaultLog []string
	// Scenarios counts each workload scenario's runs.
	Scenarios map[string]ScenarioStats
	// Acked counts acknowledged writes per kind (orders, payments, …).
	Acked map[string]int
	// Outcomes is orders by kind and final status.
	Outcomes []OutcomeRow
	// Payments by disposition, refunds and groups by status.
	Payments, Refunds, Groups map[string]int64
	// Operator counts the operator's actions.
	Operator map[string]int
	// Refusals counts final 4xx answers the workload got, by step and code,
	// and steps given up when their retry budget ran out ("gave up: …").
	Refusals map[string]int
	// Recoveries counts how often each repair path ran (from the logs).
	Recoveries map[string]int
	// Starts and Unplanned count process starts and exits nobody asked for.
	Starts, Unplanned map[string]int
	// Notifications the webhook received.
	Notifications int64
	// Lost lists acknowledged writes missing from the ledger.
	Lost []string
	// Stale lists orders whose buyer view (API, cache) disagrees with the ledger at rest.
	Stale []string
	// Contract lists the API's exchanges that broke its OpenAPI document.
	Contract []string
	// Panics lists panics and data races found in the process logs.
	Panics []string
	// Takeover times, per worker kill, how long until every order the
	// worker held was done by another process.
	Takeover TakeoverStats
	// TimeToHeal runs from the end of the last fault until every object is
	// terminal or holds a live task and every stock counter equals the
	// ledger (Healed: within the bound); HealBound is two sweep intervals.
	TimeToHeal time.Duration
	Healed     bool
	HealBound  time.Duration
	HealRest   string
	// Quiesced is whether the ledger came to rest within the bound.
	Quiesced         bool
	TimeToQuiescence time.Duration
	Rest             string
	// Audit is the ledger audit after quiescence.
	Audit *audit.Report
	Total time.Duration
	// HANotes describes an HA run's Galera kills, failovers and cuts.
	HANotes []string
	// Alipay holds an Alipay run's own figures (nil otherwise).
	Alipay *AlipayStats
	// Statements holds the statement step's figures (statements.go).
	Statements *StatementStats
	// LogDir holds every process's log.
	LogDir string
}

// MissingFaults lists fault kinds the run never injected.
func (r *Report) MissingFaults() []string {
	var out []string
	for _, k := range kindsFor(r.Short, r.HA) {
		if r.Faults[k] == 0 {
			out = append(out, k)
		}
	}
	return out
}

// Violations counts audit violations, lost writes and panics.
func (r *Report) Violations() int {
	n := len(r.Lost) + len(r.Panics) + len(r.Stale) + len(r.Contract) + len(r.Takeover.Pending)
	if r.Audit != nil {
		n += r.Audit.Violations()
	}
	if r.Statements != nil {
		n += len(r.Statements.Findings)
	}
	return n
}

// Pass reports whether the run met the bar: quiescence reached, every fault
// kind injected, audit run with 0 violations, nothing lost, no panics.
func (r *Report) Pass() bool {
	return r.Quiesced && r.Audit != nil && r.Violations() == 0 && len(r.MissingFaults()) == 0 &&
		r.Healed && r.TimeToHeal <= r.HealBound
}

// Print writes the report.
func (r *Report) Print(w io.Writer) {
	mode := "full"
	if r.Short {
		mode = "short"
	}
	fmt.Fprintf(w, "\n==================== orderflow chaos report ====================\n")
	fmt.Fprintf(w, "seed %d (%s), provider %s, workload %s, %d workers, total %s, logs %s\n", r.Seed, mode, r.Provider, r.Workload, r.Workers, r.Total.Round(time.Second), r.LogDir)

	fmt.Fprintf(w, "\nfaults injected:\n")
	for _, k := range kindsFor(r.Short, r.HA) {
		fmt.Fprintf(w, "  %-16s %d\n", k, r.Faults[k])
	}
	for _, l := range r.FaultLog {
		fmt.Fprintf(w, "    %s\n", l)
	}
	if r.HA {
		r.printHA(w)
	}

	fmt.Fprintf(w, "\nworkload scenarios:\n  %-22s %8s %9s %8s %8s\n", "scenario", "started", "completed", "refused", "gave up")
	for _, s := range Scenarios {
		st, played := r.Scenarios[s]
		if !played && !r.HA && s == scCancelTwoPays {
			continue // HA only
		}
		fmt.Fprintf(w, "  %-22s %8d %9d %8d %8d\n", s, st.Started, st.Completed, st.Refused, st.GaveUp)
	}
	fmt.Fprintf(w, "refused (final 4xx) / gave up: %s\n", kv(r.Refusals))
	fmt.Fprintf(w, "acknowledged writes: %s\n", kv(r.Acked))

	fmt.Fprintf(w, "\norders by kind and outcome:\n")
	kinds := map[string]map[string]int64{}
	statuses := map[string]bool{}
	for _, o := range r.Outcomes {
		if kinds[o.Kind] == nil {
			kinds[o.Kind] = map[string]int64{}
		}
		kinds[o.Kind][o.Status] = o.N
		statuses[o.Status] = true
	}
	cols := sortedStrings(statuses)
	fmt.Fprintf(w, "  %-14s", "kind")
	for _, s := range cols {
		fmt.Fprintf(w, " %9s", s)
	}
	fmt.Fprintf(w, " %9s\n", "total")
	for _, k := range sortedStrings(kinds) {
		fmt.Fprintf(w, "  %-14s", k)
		var total int64
		for _, s := range cols {
			fmt.Fprintf(w, " %9d", kinds[k][s])
			total += kinds[k][s]
		}
		fmt.Fprintf(w, " %9d\n", total)
	}
	fmt.Fprintf(w, "payments by disposition: %s\n", kv(r.Payments))
	fmt.Fprintf(w, "refunds by status: %s\n", kv(r.Refunds))
	fmt.Fprintf(w, "groups by status: %s\n", kv(r.Groups))
	fmt.Fprintf(w, "operator actions: %s\n", kv(r.Operator))
	fmt.Fprintf(w, "repair paths exercised: %s\n", kv(r.Recoveries))
	fmt.Fprintf(w, "notifications delivered to the webhook: %d\n", r.Notifications)
	if a := r.Alipay; a != nil {
		fmt.Fprintf(w, "alipay: %d checkouts, %d orders paid at the fake (%d with the notification lost); notifications relayed %d, payment notifications dropped %d, refund callback tries dropped %d\n",
			a.Checkouts, a.Paid, a.Lost, a.Relayed, a.PayNotifyDropped, a.RefundNotifyDropped)
		fmt.Fprintf(w, "alipay refunds: %d recorded by the fake, %d trade.refund calls (at most %d for one out_request_no; %d left unanswered on purpose)\n",
			a.Refunds, a.RefundCalls, a.MaxSends, a.TimedOut)
	}
	fmt.Fprintf(w, "process starts: %s\n", kv(r.Starts))
	fmt.Fprintf(w, "unplanned exits (restarted by the supervisor): %s\n", kv(r.Unplanned))

	fmt.Fprintf(w, "\n%s\n", r.Takeover)
	fmt.Fprintf(w, "\ntime to heal after the last fault: ")
	if r.Healed {
		fmt.Fprintf(w, "%s (bound: 2 sweep intervals = %s)\n", r.TimeToHeal.Round(10*time.Millisecond), r.HealBound)
	} else {
		fmt.Fprintf(w, "NOT healed within %s: %s\n", r.TimeToHeal.Round(time.Second), r.HealRest)
	}

	fmt.Fprintf(w, "\nquiescence: ")
	if r.Quiesced {
		fmt.Fprintf(w, "reached in %s\n", r.TimeToQuiescence.Round(100*time.Millisecond))
	} else {
		fmt.Fprintf(w, "NOT reached (%s): %s\n", r.TimeToQuiescence.Round(time.Second), r.Rest)
	}

	if r.Statements != nil {
		r.Statements.print(w)
	}

	fmt.Fprintf(w, "\nledger audit:\n")
	if r.Audit != nil {
		r.Audit.Print(w)
	} else {
		fmt.Fprintf(w, "  not run\n")
	}
	printFirst(w, "lost acknowledged writes", r.Lost)
	printFirst(w, "buyer views disagreeing with the ledger at rest", r.Stale)
	printFirst(w, "exchanges breaking the OpenAPI document", r.Contract)
	printFirst(w, "panics / data races in process logs", r.Panics)
	if m := r.MissingFaults(); len(m) > 0 {
		fmt.Fprintf(w, "fault kinds never injected: %s\n", strings.Join(m, ", "))
	}
	verdict := "PASS"
	if !r.Pass() {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "\nviolations: %d — %s\n", r.Violations(), verdict)
}

// printFirst prints a count and the first ten of a list of findings.
func printFirst(w io.Writer, title string, items []string) {
	fmt.Fprintf(w, "%s: %d\n", title, len(items))
	for i, l := range items {
		if i == 10 {
			fmt.Fprintf(w, "  … %d more\n", len(items)-10)
			break
		}
		fmt.Fprintf(w, "  %s\n", l)
	}
}

func sortedStrings[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// kv renders a count per name, sorted by name.
func kv[N int | int64](m map[string]N) string {
	var parts []string
	for _, k := range sortedStrings(m) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
