package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// SweepKey holds the fleet's last sweep pass (JSON), for the admin stats.
const SweepKey = "orderflow:sweep:last"

// SweepKind is what one pass did with one kind of object.
type SweepKind struct {
	Checked  int `json:"checked"`
	Requeued int `json:"requeued"`
}

// SweepPass is one sweep pass's report.
type SweepPass struct {
	StartedAt time.Time `json:"started_at"`
	Seconds   float64   `json:"seconds"`
	// Complete is true when the pass ended a walk over every kind (not cut
	// short by its time budget, whose cursor the next pass resumes).
	Complete bool                 `json:"complete"`
	Kinds    map[string]SweepKind `json:"kinds"`
	Error    string               `json:"error,omitempty"`
}

// Totals sums the kinds.
func (p SweepPass) Totals() SweepKind {
	var t SweepKind
	for _, k := range p.Kinds {
		t.Checked += k.Checked
		t.Requeued += k.Requeued
	}
	return t
}

type sweepCollectors struct {
	checked, requeued *prometheus.CounterVec
	seconds, lastRun  prometheus.Gauge
}

func newSweepCollectors() *sweepCollectors {
	return &sweepCollectors{
		checked:  counterVec("orderflow_sweep_checked_total", "Non-terminal objects the sweep checked for a live task, by kind.", "kind"),
		requeued: counterVec("orderflow_sweep_requeued_total", "Objects the sweep re-queued under a new generation, by kind.", "kind"),
		seconds:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "orderflow_sweep_last_pass_seconds", Help: "Duration of this process's last sweep pass."}),
		lastRun:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "orderflow_sweep_last_pass_timestamp_seconds", Help: "When this process's last sweep pass started (Unix time)."}),
	}
}

func (c *sweepCollectors) register(r *prometheus.Registry) {
	r.MustRegister(c.checked, c.requeued, c.seconds, c.lastRun)
}

// Swept records a sweep pass: this process's counters and gauges, and the
// fleet's last pass in Redis for GET /api/v1/admin/stats.
func (m *Metrics) Swept(ctx context.Context, p SweepPass) {
	if m == nil {
		return
	}
	for kind, k := range p.Kinds {
		m.sweep.checked.WithLabelValues(kind).Add(float64(k.Checked))
		m.sweep.requeued.WithLabelValues(kind).Add(float64(k.Requeued))
	}
	m.sweep.seconds.Set(p.Seconds)
	m.sweep.lastRun.Set(float64(p.StartedAt.UnixMilli()) / 1000)
	b, err := json.Marshal(p)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 200*time.Millisecond)
	defer cancel()
	_ = m.rdb.Set(ctx, SweepKey, b, 0).Err() // observability: best effort
}

// LastSweep reads the fleet's last sweep pass; nil when none was recorded.
func LastSweep(ctx context.Context, rdb redis.UniversalClient) (*SweepPass, error) {
	b, err := rdb.Get(ctx, SweepKey).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var p SweepPass
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, err
	}
	return &p, nil
}
