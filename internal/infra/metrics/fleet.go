package metrics

import "github.com/prometheus/client_golang/prometheus"

// fleetCollectors count what survivors took over from lost workers.
type fleetCollectors struct {
	takeovers     prometheus.Counter
	claims        prometheus.Counter
	orphanedTasks prometheus.Counter
}

func newFleetCollectors() *fleetCollectors {
	return &fleetCollectors{
		takeovers: prometheus.NewCounter(prometheus.CounterOpts{Name: "orderflow_worker_takeovers_total",
			Help: "Workers whose lease lapsed (dead or frozen), taken over by this process."}),
		claims: prometheus.NewCounter(prometheus.CounterOpts{Name: "orderflow_worker_takeover_claims_total",
			Help: "Claims of lost workers released to paid and re-queued by this process."}),
		orphanedTasks: prometheus.NewCounter(prometheus.CounterOpts{Name: "orderflow_orphaned_tasks_requeued_total",
			Help: "asynq tasks held by a lost worker put back in their queue by this process."}),
	}
}

func (f *fleetCollectors) register(r *prometheus.Registry) {
	r.MustRegister(f.takeovers, f.claims, f.orphanedTasks)
}

// WorkerTakenOver counts one lost worker taken over and the claims released.
func (m *Metrics) WorkerTakenOver(claims int) {
	if m != nil {
		m.fleet.takeovers.Inc()
		m.fleet.claims.Add(float64(claims))
	}
}

// OrphanedTasks counts asynq tasks of a lost worker put back in their queue.
func (m *Metrics) OrphanedTasks(n int) {
	if m != nil {
		m.fleet.orphanedTasks.Add(float64(n))
	}
}
