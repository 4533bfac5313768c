// Package metrics holds orderflow's business metrics: Prometheus collectors
// per process, plus fleet-wide event counters in Redis (a hash) so the admin
// stats endpoint sees what every worker did. Counters are observability,
// not ledger: losing them with Redis loses nothing that matters.
package metrics

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// StatsKey is the Redis hash of fleet-wide event counters.
const StatsKey = "orderflow:stats"

// Fleet-wide counter fields in StatsKey.
const (
	FieldCloseSucceeded  = "close_succeeded"
	FieldCloseFailed     = "close_failed"
	FieldRefundAttemptOK = "refund_attempt_ok"
	FieldRefundAttemptKO = "refund_attempt_failed"
	FieldStuckRecovered  = "stuck_recovered"
)

// Metrics records business events. A nil *Metrics records nothing.
type Metrics struct {
	Registry *prometheus.Registry

	rdb            redis.UniversalClient
	closes         *prometheus.CounterVec
	refundAttempts *prometheus.CounterVec
	stuckRecovered prometheus.Counter
	activations    prometheus.Counter
	activationLag  prometheus.Histogram
	batchSize      prometheus.Histogram
	sweep          *sweepCollectors
	fleet          *fleetCollectors
	periodicRuns   *prometheus.CounterVec
}

// counterVec is a counter split by one label, built from its name and help.
func counterVec(name, help, label string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{label})
}

// New builds the collectors on a fresh registry.
func New(rdb redis.UniversalClient) *Metrics {
	m := &Metrics{
		Registry:       prometheus.NewRegistry(),
		rdb:            rdb,
		sweep:          newSweepCollectors(),
		fleet:          newFleetCollectors(),
		periodicRuns:   newPeriodicRuns(),
		closes:         counterVec("orderflow_order_close_total", "Order close attempts by result (success, failure).", "result"),
		refundAttempts: counterVec("orderflow_refund_attempts_total", "Provider refund calls by result (success, failure).", "result"),
		stuckRecovered: prometheus.NewCounter(prometheus.CounterOpts{Name: "orderflow_stuck_claims_recovered_total", Help: "Claims older than the claim timeout reset to paid and re-queued."}),
		activations:    prometheus.NewCounter(prometheus.CounterOpts{Name: "orderflow_orders_activated_total", Help: "Orders delivered (claimed→finished) by this process."}),
		activationLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "orderflow_activation_latency_seconds", Help: "Time from paid to finished.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "orderflow_activation_batch_size", Help: "Activate tasks a worker ran as one batch (1: alone).",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64},
		}),
	}
	m.Registry.MustRegister(m.closes, m.refundAttempts, m.stuckRecovered, m.activations, m.activationLag, m.batchSize, m.periodicRuns)
	m.sweep.register(m.Registry)
	m.fleet.register(m.Registry)
	for _, r := range []string{"success", "failure"} {
		m.closes.WithLabelValues(r)
		m.refundAttempts.WithLabelValues(r)
	}
	return m
}

func (m *Metrics) bump(field string) {
	// Fleet counters are best effort and must never slow the path that calls them.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_ = m.rdb.HIncrBy(ctx, StatsKey, field, 1).Err()
}

// CloseSucceeded counts a close that moved an order pending→closed.
func (m *Metrics) CloseSucceeded() {
	if m != nil {
		m.closes.WithLabelValues("success").Inc()
		m.bump(FieldCloseSucceeded)
	}
}

// CloseFailed counts a close attempt that errored.
func (m *Metrics) CloseFailed() {
	if m != nil {
		m.closes.WithLabelValues("failure").Inc()
		m.bump(FieldCloseFailed)
	}
}

// RefundAttempt counts one provider refund call.
func (m *Metrics) RefundAttempt(ok bool) {
	if m == nil {
		return
	}
	if ok {
		m.refundAttempts.WithLabelValues("success").Inc()
		m.bump(FieldRefundAttemptOK)
		return
	}
	m.refundAttempts.WithLabelValues("failure").Inc()
	m.bump(FieldRefundAttemptKO)
}

// StuckRecovered counts a stuck claim reset by the recovery job.
func (m *Metrics) StuckRecovered() {
	if m != nil {
		m.stuckRecovered.Inc()
		m.bump(FieldStuckRecovered)
	}
}

// Activated records a delivered order and its paid→finished latency.
func (m *Metrics) Activated(paidAt, finishedAt time.Time) {
	if m != nil {
		m.activations.Inc()
		m.activationLag.Observe(finishedAt.Sub(paidAt).Seconds())
	}
}

// ActivationBatch records the size of one activation batch.
func (m *Metrics) ActivationBatch(n int) {
	if m != nil {
		m.batchSize.Observe(float64(n))
	}
}

// Fleet reads the fleet-wide counters.
func Fleet(ctx context.Context, rdb redis.UniversalClient) (map[string]int64, error) {
	raw, err := rdb.HGetAll(ctx, StatsKey).Result()
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(raw))
	for k, v := range raw {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			continue
		}
		out[k] = n
	}
	return out, nil
}
