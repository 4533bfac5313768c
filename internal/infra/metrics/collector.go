package metrics

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/operators"
	"orderflow/internal/infra/schedule"
	"orderflow/model"

	"github.com/hibiken/asynq"
	asynqmetrics "github.com/hibiken/asynq/x/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Sources are what the scrape-time gauges read: the ledger and asynq.
type Sources struct {
	Store     *model.Store
	Inspector *asynq.Inspector
	Clock     clock.Clock
	// Jobs are the periodic jobs, for their last and next slot.
	Jobs []schedule.Job
	// StatementProviders are the enabled providers that publish statements
	// and BreakKinds the statement break kinds: each (provider, kind,
	// status) series is there at 0 before its first break, and an enabled
	// provider without a good run yet is reported as such.
	StatementProviders, BreakKinds []string
}

// ledgerCollector reads gauges at scrape time, so every process reports the
// same fleet-wide truth from the ledger and the broker.
type ledgerCollector struct {
	src                                         Sources
	orders, refunds, outbox, outboxAge, notices *prometheus.Desc
	held                                        *prometheus.Desc
	periodicLast, periodicNext                  *prometheus.Desc
}

func newLedgerCollector(src Sources) *ledgerCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &ledgerCollector{
		src:          src,
		orders:       d("orderflow_orders", "Orders by status, from the ledger.", "status"),
		refunds:      d("orderflow_refunds", "Refunds by status (manual = waiting for an operator).", "status"),
		outbox:       d("orderflow_outbox_backlog", "Outbox rows not yet handed to asynq."),
		outboxAge:    d("orderflow_outbox_oldest_age_seconds", "Age of the oldest outbox row (0 when empty)."),
		notices:      d("orderflow_notifications_pending", "Notifications not yet acknowledged by the webhook."),
		held:         d("orderflow_held_payments", "Payments held for an operator: their trade already pays another order."),
		periodicLast: d("orderflow_periodic_last_slot_timestamp_seconds", "The latest slot a periodic job's run claimed, from the ledger (Unix time).", "job"),
		periodicNext: d("orderflow_periodic_next_slot_timestamp_seconds", "The next slot of a periodic job's schedule (Unix time).", "job"),
	}
}

func (c *ledgerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.orders, c.refunds, c.outbox, c.outboxAge, c.notices, c.held, c.periodicLast, c.periodicNext} {
		ch <- d
	}
}

func (c *ledgerCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if byStatus, err := c.src.Store.CountOrdersByStatus(ctx); err == nil {
		for _, st := range model.OrderMachine.Statuses() {
			gauge(c.orders, float64(byStatus[st]), st.String())
		}
	}
	if byStatus, err := c.src.Store.CountRefundsByStatus(ctx); err == nil {
		for _, st := range model.RefundMachine.Statuses() {
			gauge(c.refunds, float64(byStatus[st]), st.String())
		}
	}
	if n, age, err := c.src.Store.OutboxBacklog(ctx, c.src.Clock.Now()); err == nil {
		gauge(c.outbox, float64(n))
		gauge(c.outboxAge, age.Seconds())
	}
	if n, err := c.src.Store.CountUndelivered(ctx); err == nil {
		gauge(c.notices, float64(n))
	}
	if n, err := c.src.Store.CountHeldPayments(ctx); err == nil {
		gauge(c.held, float64(n))
	}
	now := c.src.Clock.Now()
	last, err := c.src.Store.LastPeriodicSlots(ctx)
	for _, j := range c.src.Jobs {
		if at, ok := last[j.Type]; ok && err == nil {
			gauge(c.periodicLast, unixSeconds(at), j.Type)
		}
		gauge(c.periodicNext, unixSeconds(j.When.Next(now)), j.Type)
	}
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

var registerOnce sync.Map

// Handler serves /metrics: this process's counters, the scrape-time ledger
// gauges, and asynq's own queue series (asynq_*, from asynq's collector, so
// the standard asynq dashboards and asynqmon's metrics view work; the
// product exports no copy of them).
func Handler(m *Metrics, src Sources) http.Handler {
	if _, loaded := registerOnce.LoadOrStore(m, true); !loaded {
		m.Registry.MustRegister(newLedgerCollector(src), newStatementCollector(src), asynqmetrics.NewQueueMetricsCollector(src.Inspector))
	}
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}

// Stats is GET /api/v1/admin/stats: the operator's one-page summary.
type Stats struct {
	Orders               map[string]int64             `json:"orders"`
	Refunds              map[model.RefundStatus]int64 `json:"refunds"`
	RefundsInManual      int64                        `json:"refunds_in_manual"`
	Queues               map[string]map[string]int    `json:"queues"`
	CloseQueueLength     int                          `json:"close_queue_length"`
	PendingNotifications int64                        `json:"pending_notifications"`
	HeldPayments         int64                        `json:"held_payments"`
	OutboxBacklog        int64                        `json:"outbox_backlog"`
	OutboxOldestSeconds  float64                      `json:"outbox_oldest_age_seconds"`
	CloseSuccessRate     *float64                     `json:"close_success_rate"`
	RefundFailureRate    *float64                     `json:"refund_failure_rate"`
	RefundAttemptFailure *float64                     `json:"refund_attempt_failure_rate"`
	Fleet                map[string]int64             `json:"fleet_counters"`
	// Sweep is the fleet's last sweep pass (null before the first).
	Sweep *SweepPass `json:"sweep"`
	// Periodic is each periodic job's schedule, last claimed and next slot.
	Periodic map[string]PeriodicSlots `json:"periodic"`
	// StatementBreaksOpen counts the open provider statement breaks, and
	// StatementBreaksOpenByKind by kind (every kind, 0 when none).
	StatementBreaksOpen       int64            `json:"statement_breaks_open"`
	StatementBreaksOpenByKind map[string]int64 `json:"statement_breaks_open_by_kind"`
}

// PeriodicSlots is one periodic job in the admin stats.
type PeriodicSlots struct {
	Schedule string `json:"schedule"`
	// LastSlot is the latest slot a run claimed (null before the first).
	LastSlot *time.Time `json:"last_slot"`
	NextSlot time.Time  `json:"next_slot"`
}

// Collect gathers the stats from the ledger, asynq and the fleet counters.
func Collect(ctx context.Context, m *Metrics, src Sources) (*Stats, error) {
	st := &Stats{Orders: map[string]int64{}, Refunds: map[model.RefundStatus]int64{}, Queues: map[string]map[string]int{}}
	orders, err := src.Store.CountOrdersByStatus(ctx)
	if err != nil {
		return nil, err
	}
	for s, n := range orders {
		st.Orders[s.String()] = n
	}
	if st.Refunds, err = src.Store.CountRefundsByStatus(ctx); err != nil {
		return nil, err
	}
	st.RefundsInManual = st.Refunds[model.RefundManual]
	if done := st.Refunds[model.RefundSucceeded] + st.Refunds[model.RefundManual]; done > 0 {
		st.RefundFailureRate = ratio(st.Refunds[model.RefundManual], done)
	}
	if st.PendingNotifications, err = src.Store.CountUndelivered(ctx); err != nil {
		return nil, err
	}
	if st.HeldPayments, err = src.Store.CountHeldPayments(ctx); err != nil {
		return nil, err
	}
	var age time.Duration
	if st.OutboxBacklog, age, err = src.Store.OutboxBacklog(ctx, src.Clock.Now()); err != nil {
		return nil, err
	}
	st.OutboxOldestSeconds = age.Seconds()
	if err := statementStats(ctx, src, st); err != nil {
		return nil, err
	}
	last, err := src.Store.LastPeriodicSlots(ctx)
	if err != nil {
		return nil, err
	}
	st.Periodic = make(map[string]PeriodicSlots, len(src.Jobs))
	for _, j := range src.Jobs {
		ps := PeriodicSlots{Schedule: j.When.String(), NextSlot: j.When.Next(src.Clock.Now())}
		if at, ok := last[j.Type]; ok {
			ps.LastSlot = &at
		}
		st.Periodic[j.Type] = ps
	}
	if queues, err := src.Inspector.Queues(); err == nil {
		for _, q := range queues {
			if info, err := src.Inspector.GetQueueInfo(q); err == nil {
				st.Queues[q] = map[string]int{"pending": info.Pending, "active": info.Active, "scheduled": info.Scheduled, "retry": info.Retry, "archived": info.Archived}
				if q == "close" {
					st.CloseQueueLength = info.Size
				}
			}
		}
	}
	if m != nil {
		st.Sweep, _ = LastSweep(ctx, m.rdb) // observability: missing with Redis is fine
		if st.Fleet, err = Fleet(ctx, m.rdb); err == nil {
			if n := st.Fleet[FieldCloseSucceeded] + st.Fleet[FieldCloseFailed]; n > 0 {
				st.CloseSuccessRate = ratio(st.Fleet[FieldCloseSucceeded], n)
			}
			if n := st.Fleet[FieldRefundAttemptOK] + st.Fleet[FieldRefundAttemptKO]; n > 0 {
				st.RefundAttemptFailure = ratio(st.Fleet[FieldRefundAttemptKO], n)
			}
		}
	}
	return st, nil
}

func ratio(a, b int64) *float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(float64(a)/float64(b), 'f', 4, 64), 64)
	return &r
}

// Guard puts a /metrics handler behind the operators' tokens (any role)
// when auth is "admin" (ORDERFLOW_METRICS_AUTH), for shops that expose the
// port; "none" serves it to anyone, as a Prometheus scrape without
// credentials expects.
func Guard(h http.Handler, auth string, ops *operators.Set) http.Handler {
	if auth != "admin" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if _, ok := ops.ByToken(token); !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"code":"unauthorized","message":"/metrics needs an operator's token (ORDERFLOW_METRICS_AUTH=admin)"}}` + "\n"))
			return
		}
		h.ServeHTTP(w, r)
	})
}
