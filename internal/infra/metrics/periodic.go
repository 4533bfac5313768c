package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// periodicRuns counts this process's periodic task runs by whether they won
// their slot's claim (ran) or found it claimed (skipped): summed over the
// fleet, ran is one per slot.
func newPeriodicRuns() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "orderflow_periodic_runs_total",
		Help: "Periodic task runs by job and result (ran: won the slot's claim; skipped: another run had it).",
	}, []string{"job", "result"})
}

// PeriodicRun counts one periodic task run.
func (m *Metrics) PeriodicRun(job string, ran bool) {
	if m == nil {
		return
	}
	result := "skipped"
	if ran {
		result = "ran"
	}
	m.periodicRuns.WithLabelValues(job, result).Inc()
}

// PeriodicRunsOf is this process's count of a job's runs that ran (or, with
// ran false, were skipped): the fleet tests sum it over workers.
func (m *Metrics) PeriodicRunsOf(job string, ran bool) float64 {
	result := "skipped"
	if ran {
		result = "ran"
	}
	var out dto.Metric
	if err := m.periodicRuns.WithLabelValues(job, result).Write(&out); err != nil {
		return 0
	}
	return out.GetCounter().GetValue()
}
