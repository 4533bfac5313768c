package metrics

import (
	"context"
	"math"
	"time"

	"orderflow/model"

	"github.com/prometheus/client_golang/prometheus"
)

// statementCollector reads the statement gauges at scrape time: breaks by
// provider, kind and status, the age of each provider's last good run and
// of its oldest open break (docs/statements.md).
type statementCollector struct {
	src                          Sources
	breaks, lastGood, oldestOpen *prometheus.Desc
}

func newStatementCollector(src Sources) *statementCollector {
	return &statementCollector{
		src: src,
		breaks: prometheus.NewDesc("orderflow_statement_breaks",
			"Provider statement breaks by provider, kind and status (0 for every enabled provider's kind before its first).",
			[]string{"provider", "kind", "status"}, nil),
		lastGood: prometheus.NewDesc("orderflow_statement_last_good_run_age_seconds",
			"Seconds since the latest done statement run of an enabled provider finished; +Inf when the provider has none yet, so an alert on it fires.",
			[]string{"provider"}, nil),
		oldestOpen: prometheus.NewDesc("orderflow_statement_oldest_open_break_age_seconds",
			"Seconds since a provider's oldest open statement break was listed (0 when none is open).",
			[]string{"provider"}, nil),
	}
}

func (c *statementCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.breaks
	ch <- c.lastGood
	ch <- c.oldestOpen
}

func (c *statementCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	now := c.src.Clock.Now()
	if counts, err := c.src.Store.StatementBreakCounts(ctx); err == nil {
		type key struct{ provider, kind, status string }
		n := map[key]int64{}
		for _, p := range c.src.StatementProviders {
			for _, k := range c.src.BreakKinds {
				for _, st := range model.BreakMachine.Statuses() {
					n[key{p, k, st.String()}] = 0
				}
			}
		}
		oldest := map[string]time.Time{}
		for _, p := range c.src.StatementProviders {
			oldest[p] = time.Time{}
		}
		for _, b := range counts {
			n[key{b.Provider, b.Kind, b.Status.String()}] = b.N
			if o, ok := oldest[b.Provider]; b.Status == model.BreakOpen && (!ok || o.IsZero() || b.Oldest.Before(o)) {
				oldest[b.Provider] = b.Oldest
			}
		}
		for k, v := range n {
			gauge(c.breaks, float64(v), k.provider, k.kind, k.status)
		}
		for p, at := range oldest {
			age := 0.0
			if !at.IsZero() {
				age = max(now.Sub(at).Seconds(), 0)
			}
			gauge(c.oldestOpen, age, p)
		}
	}
	if last, err := c.src.Store.LastGoodStatementRuns(ctx); err == nil {
		for _, p := range c.src.StatementProviders {
			age := math.Inf(1)
			if at, ok := last[p]; ok {
				age = max(now.Sub(at).Seconds(), 0)
			}
			gauge(c.lastGood, age, p)
		}
	}
}

// statementStats adds the open breaks to the admin stats.
func statementStats(ctx context.Context, src Sources, st *Stats) error {
	counts, err := src.Store.StatementBreakCounts(ctx)
	if err != nil {
		return err
	}
	st.StatementBreaksOpenByKind = map[string]int64{}
	for _, k := range src.BreakKinds {
		st.StatementBreaksOpenByKind[k] = 0
	}
	for _, b := range counts {
		if b.Status == model.BreakOpen {
			st.StatementBreaksOpen += b.N
			st.StatementBreaksOpenByKind[b.Kind] += b.N
		}
	}
	return nil
}
