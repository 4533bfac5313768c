package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is everything one run measured; it is printed as a table and
// written as JSON for tracking.
type Report struct {
	StartedAt     time.Time       `json:"started_at"`
	RuntimeS      float64         `json:"runtime_s"`
	Machine       Machine         `json:"machine"`
	Params        Params          `json:"params"`
	Floor         []FloorPoint    `json:"floor"`
	FloorBest     *FloorPoint     `json:"floor_best,omitempty"`             // the best point before the end-to-end phase
	FloorAfter    *FloorPoint     `json:"floor_after,omitempty"`            // the same pool size again, right after it
	FloorForRatio float64         `json:"floor_for_ratio,omitempty"`        // mean of the two: the denominator
	CPURatio      float64         `json:"cpu_ratio_floor_to_e2e,omitempty"` // floor CPU per order ÷ the product's: the ratio the CPU budget predicts
	E2E           *E2EReport      `json:"end_to_end,omitempty"`
	Galera        *GaleraResult   `json:"galera,omitempty"`
	Close         *CloseResult    `json:"timeout_close,omitempty"`
	Group         *GroupResult    `json:"group_settle,omitempty"`
	Resources     []Resource      `json:"resources,omitempty"`
	Ratio         float64         `json:"ratio_e2e_to_floor,omitempty"`
	Growth        *GrowthResult   `json:"growth,omitempty"`
	Distance      *DistanceResult `json:"distance,omitempty"`
	Census        *CensusResult   `json:"census,omitempty"`
	Plans         []Plan          `json:"plans,omitempty"`
	Ledger        *LedgerResult   `json:"ledger,omitempty"`
	Targets       []Target        `json:"targets"`
	Errors        []string        `json:"errors"`
}

// Machine describes where the numbers came from.
type Machine struct {
	CPUs        int    `json:"cpus"`
	LoadAtStart string `json:"loadavg_at_start"`
	LoadAtEnd   string `json:"loadavg_at_end"`
	MariaDB     string `json:"mariadb"`
	Go          string `json:"go"`
	RedisDB     int    `json:"redis_db"`
	Git         string `json:"git"` // HEAD and the tracked files modified in the tree measured
}

// E2EReport is phase 2: the closed loop (the maximum) and the open loop at half of it.
type E2EReport struct {
	Workers int         `json:"workers"`
	Pay     string      `json:"pay"`
	Closed  *LoadResult `json:"closed_loop"`
	Half    *LoadResult `json:"half_load,omitempty"`
}

// Resource is one process kind's cost during the end-to-end phase.
type Resource struct {
	Process    string  `json:"process"`
	PeakRSSMB  float64 `json:"peak_rss_mb,omitempty"`
	CPUSeconds float64 `json:"cpu_s"`
	CPUPer1k   float64 `json:"cpu_s_per_1k_orders"`
	Note       string  `json:"note,omitempty"`
}

// Target is one "done when" bar of issue 18.
type Target struct {
	What  string `json:"what"`
	Value string `json:"value"`
	Bar   string `json:"bar"`
	Met   bool   `json:"met"`
}

func (r *Report) targets() {
	add := func(what, value, bar string, met bool) {
		r.Targets = append(r.Targets, Target{what, value, bar, met})
	}
	if r.Ratio > 0 {
		add("end-to-end ÷ floor", fmt.Sprintf("%.2f", r.Ratio), "≥ 0.7 (aim 1.0)", r.Ratio >= 0.7)
	}
	if r.E2E != nil && r.E2E.Half != nil {
		p99 := r.E2E.Half.PaidToFinished.P99
		add("half load paid→finished p99", fmt.Sprintf("%.0f ms", p99), "< 50 ms", p99 < 50)
	}
	if r.Close != nil {
		p99 := r.Close.Lag.P99
		add("close lag p99 (1,000 expiring together)", fmt.Sprintf("%.0f ms", p99), "< 1.5 s", p99 < 1500)
	}
	if r.Group != nil {
		add("1,000-participant group settle (commit − deadline)", fmt.Sprintf("%.3f s", r.Group.CommittedS), "< 0.5 s", r.Group.CommittedS < 0.5)
	}
	if g := r.Growth; g != nil {
		if g.RatioToEmpty > 0 {
			add("closed loop with the pre-load ÷ empty ledger", fmt.Sprintf("%.2f", g.RatioToEmpty), "≥ 0.9", g.RatioToEmpty >= 0.9)
		}
		if ps := g.Passes; ps != nil {
			for _, v := range []struct {
				name string
				pt   PassTime
			}{{"sweep pass", ps.Sweep}, {"reconciliation pass", ps.Reconcile}} {
				db := v.pt.dbSeconds()
				add(fmt.Sprintf("%s over %d pending: database time", v.name, ps.Pending), fmt.Sprintf("%.2f s", db), "< 2 s (aim)", db < 2)
			}
		}
	}
	if c := r.Census; c != nil && c.WorkerCount > 0 {
		add("idle Redis round trips per worker", fmt.Sprintf("%.1f/s", c.IdleRedisPerWorker), "≤ 50/s", c.IdleRedisPerWorker <= 50)
	}
	if d := r.Distance; d != nil && d.Ratio > 0 {
		add(fmt.Sprintf("end-to-end ÷ floor at %s RTT (issue 35)", msText(r.Params.RTT.D())), fmt.Sprintf("%.2f", d.Ratio), "≥ 1.0", d.Ratio >= 1)
	}
	add("bench run time", fmt.Sprintf("%.0f s", r.RuntimeS), "< 600 s", r.RuntimeS < 600)
	if r.Ledger != nil {
		add("ledger audit", fmt.Sprintf("%d violations", len(r.Ledger.Violations)), "0", len(r.Ledger.Violations) == 0)
	}
}

func (r *Report) printTable(w io.Writer) {
	fmt.Fprintf(w, "\norderflow bench — %s, %d CPUs, MariaDB %s, %s, Redis DB %d, load avg at start %s (end %s)\ncode: %s\n",
		r.StartedAt.Format(time.RFC3339), r.Machine.CPUs, r.Machine.MariaDB, r.Machine.Go, r.Machine.RedisDB, r.Machine.LoadAtStart, r.Machine.LoadAtEnd, r.Machine.Git)
	p := r.Params
	procs := "Go's default"
	if p.GoMaxProcs > 0 {
		procs = fmt.Sprint(p.GoMaxProcs)
	}
	fmt.Fprintf(w, "parameters: workers=%d concurrency=%d db_max_open=%d clients=%d backlog=%d users=%d warmup=%s steady=%s half=%s pay=%s gomaxprocs=%s\n"+
		"            floor_conns=%v floor_time=%s close_orders=%d order_ttl=%s group=%d lead=%s census=%d rtt=%s extra_env=%v\n\n",
		p.Workers, p.Concurrency, p.DBMaxOpen, p.Clients, p.Backlog, p.Users, p.Warmup.D(), p.Steady.D(), p.HalfTime.D(), p.Pay, procs,
		p.FloorConns, p.FloorTime.D(), p.CloseOrders, p.OrderTTL.D(), p.GroupSize, p.GroupLead.D(), p.Census, msText(p.RTT.D()), p.Extra)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")) }
	row("#", "measure", "value", "detail")
	row("-", "-------", "-----", "------")
	for _, f := range r.Floor {
		row("1", fmt.Sprintf("raw floor, %d connections", f.Conns), fmt.Sprintf("%.0f orders/s", f.OrdersPerS),
			fmt.Sprintf("p50 %.1f ms, p99 %.1f ms, %d orders; %d tx, %d round trips, %.2f row lock waits (%.1f ms), CPU %.2f ms MariaDB + %.2f ms bench per order; %s",
				f.P50Ms, f.P99Ms, f.Orders, floorTransactions, floorRoundTrips, f.Locks.WaitsPerOrder, f.Locks.MsPerOrder, f.MariaDBCPUms, f.BenchCPUms, f.Machine))
	}
	if e := r.E2E; e != nil && e.Closed != nil {
		c := e.Closed
		row("2", fmt.Sprintf("end-to-end, closed loop (%d worker(s), pay=%s)", e.Workers, e.Pay), fmt.Sprintf("%.0f orders/s", c.OrdersPerS),
			fmt.Sprintf("%d orders; %d clients, backlog ≤ %d; drain %.1f s; %d client errors", c.Orders, p.Clients, p.Backlog, c.DrainSeconds, c.ClientErrors))
		row("", "  paid→finished p50 / p95 / p99", q3(c.PaidToFinished), fmt.Sprintf("max %.0f ms (n=%d)", c.PaidToFinished.Max, c.PaidToFinished.N))
		row("", "  paid→claimed / claimed→finished p50", fmt.Sprintf("%.1f / %.1f ms", c.PaidToClaimed.P50, c.ClaimedToFinished.P50),
			fmt.Sprintf("p99 %.0f / %.0f ms", c.PaidToClaimed.P99, c.ClaimedToFinished.P99))
		row("", "  create / pay request p50 (client side)", fmt.Sprintf("%.1f / %.1f ms", c.Create.P50, c.Pay.P50),
			fmt.Sprintf("p99 %.0f / %.0f ms; %.2f row lock waits (%.1f ms) per order", c.Create.P99, c.Pay.P99, c.Locks.WaitsPerOrder, c.Locks.MsPerOrder))
		row("", "  activation batch sizes", "closed loop", c.Batches.String())
		row("", "  the whole box", "closed loop", c.Machine.String())
		if len(c.MovePlans) > 0 {
			row("", "  index EXPLAIN picks for the worker's moves", "closed loop", planCounts(c.MovePlans))
		}
		if h := e.Half; h != nil {
			row("2", fmt.Sprintf("half load, open loop %.0f orders/s for %.0f s", h.OfferedPerS, h.Seconds), "p99 "+fmt.Sprintf("%.0f ms", h.PaidToFinished.P99),
				fmt.Sprintf("p50 %.1f, p95 %.1f, max %.0f ms; paid→claimed p50 %.1f p99 %.0f ms; %d orders, %d errors, %d late",
					h.PaidToFinished.P50, h.PaidToFinished.P95, h.PaidToFinished.Max, h.PaidToClaimed.P50, h.PaidToClaimed.P99, h.Orders, h.ClientErrors, h.LateArrivals))
			row("", "  activation batch sizes", "half load", h.Batches.String())
			row("", "  the whole box", "half load", h.Machine.String()+"; create / pay request p50 "+fmt.Sprintf("%.1f / %.1f ms", h.Create.P50, h.Pay.P50))
			if len(h.MovePlans) > 0 {
				row("", "  index EXPLAIN picks for the worker's moves", "half load", planCounts(h.MovePlans))
			}
		}
	}
	if g := r.Galera; g != nil {
		for _, v := range []struct {
			name string
			res  *LoadResult
		}{{"wsrep_sync_wait=1", g.SyncWait}, {"wsrep_sync_wait=0", g.NoSyncWait}} {
			if c := v.res; c != nil {
				row("2g", fmt.Sprintf("3-node Galera, closed loop: API on node 1, workers on node 2 (%s)", v.name), fmt.Sprintf("%.0f orders/s", c.OrdersPerS),
					fmt.Sprintf("paid→finished p50 %.1f / p95 %.1f / p99 %.1f ms; create / pay p50 %.1f / %.1f ms; %d orders, %d client errors",
						c.PaidToFinished.P50, c.PaidToFinished.P95, c.PaidToFinished.P99, c.Create.P50, c.Pay.P50, c.Orders, c.ClientErrors))
			}
		}
	}
	if c := r.Close; c != nil {
		row("3", fmt.Sprintf("timeout close, %d orders (ttl %s)", c.Orders, c.OrderTTL), fmt.Sprintf("lag p99 %.0f ms", c.Lag.P99),
			fmt.Sprintf("p50 %.0f ms, max %.0f ms; created in %.2f s over %d expiry second(s); all closed %.2f s after the first expiry, %.2f s after the last",
				c.Lag.P50, c.Lag.Max, c.CreateSpreadS, c.ExpireSeconds, c.AllClosedS, c.AfterLastExpS))
		row("", "  lag after the scheduled whole second p50 / p99", fmt.Sprintf("%.0f / %.0f ms", c.LagAfterSecond.P50, c.LagAfterSecond.P99), "asynq schedules in whole seconds; expire_at is rounded up")
	}
	if g := r.Group; g != nil {
		row("4", fmt.Sprintf("group settle, %d participants", g.Participants), fmt.Sprintf("%.3f s", g.CommittedS),
			fmt.Sprintf("commit seen − deadline; settled_at − deadline %.3f s, closed_at − deadline %.3f s; %d charged; joins %.2f s (%d spurious 409 group_closed retried)",
				g.SettleS, g.CloseS, g.Charged, g.JoinSeconds, g.SpuriousClosed))
	}
	for _, res := range r.Resources {
		val := fmt.Sprintf("%.2f CPU s / 1k orders", res.CPUPer1k)
		detail := fmt.Sprintf("%.1f CPU s in the phase", res.CPUSeconds)
		if res.PeakRSSMB > 0 {
			detail = fmt.Sprintf("peak RSS %.0f MiB; ", res.PeakRSSMB) + detail
		}
		if res.Note != "" {
			detail += "; " + res.Note
		}
		row("5", res.Process, val, detail)
	}
	if f := r.FloorAfter; f != nil {
		row("1", fmt.Sprintf("raw floor again after phase 2, %d connections", f.Conns), fmt.Sprintf("%.0f orders/s", f.OrdersPerS),
			fmt.Sprintf("p50 %.1f ms, p99 %.1f ms; %s; the machine is shared, so the ratio divides by the mean of before and after", f.P50Ms, f.P99Ms, f.Machine))
	}
	if r.Ratio > 0 && r.FloorBest != nil {
		row("6", "end-to-end ÷ floor", fmt.Sprintf("%.2f", r.Ratio), fmt.Sprintf("%.0f ÷ %.0f orders/s (floor at %d connections); CPU per order floor ÷ product = %.2f",
			r.E2E.Closed.OrdersPerS, r.FloorForRatio, r.FloorBest.Conns, r.CPURatio))
	}
	r.growthRows(row)
	tw.Flush()
	if r.Census != nil {
		r.Census.print(w)
	}
	r.printDistance(w)
	if len(r.Plans) > 0 {
		fmt.Fprintln(w, "\nplans of the hot statements (EXPLAIN on the run's ledger):")
		for _, pl := range r.Plans {
			fmt.Fprintf(w, "  %-44s %s\n", pl.Name, strings.Join(pl.Steps, " | "))
		}
	}
	if r.Ledger != nil {
		fmt.Fprintf(w, "\nledger audit: %d checks, orders %v, %d violation(s)\n", r.Ledger.Checks, r.Ledger.Orders, len(r.Ledger.Violations))
		for _, v := range r.Ledger.Violations {
			fmt.Fprintln(w, "  VIOLATION:", v)
		}
	}
	fmt.Fprintln(w, "\ntargets (issue 18, done when):")
	for _, t := range r.Targets {
		mark := "met"
		if !t.Met {
			mark = "NOT MET"
		}
		fmt.Fprintf(w, "  %-52s %-16s %-18s %s\n", t.What, t.Value, t.Bar, mark)
	}
	for _, e := range r.Errors {
		fmt.Fprintln(w, "ERROR:", e)
	}
	fmt.Fprintf(w, "run time %.1f s\n", r.RuntimeS)
}

func q3(q Quantiles) string { return fmt.Sprintf("%.1f / %.1f / %.1f ms", q.P50, q.P95, q.P99) }

func (r *Report) writeJSON(w io.Writer, path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s\n", b)
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// planCounts renders "claim: PRIMARY ×7, idx_… ×3; finalize: …".
func planCounts(plans map[string]map[string]int) string {
	var parts []string
	for _, name := range sortedKeys(plans) {
		var keys []string
		for _, k := range sortedKeys(plans[name]) {
			keys = append(keys, fmt.Sprintf("%s ×%d", k, plans[name][k]))
		}
		parts = append(parts, name+": "+strings.Join(keys, ", "))
	}
	return strings.Join(parts, "; ")
}
