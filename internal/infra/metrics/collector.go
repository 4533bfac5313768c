package metrics

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"orderflow/internal/infra/clock"
	"orderflow/model"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Sources are what the scrape-time gauges read: the ledger and asynq.
type Sources struct {
	Store     *model.Store
	Inspector *asynq.Inspector
	Clock     clock.Clock
}

// ledgerCollector reads gauges at scrape time, so every process reports the
// same fleet-wide truth from the ledger and the broker.
type ledgerCollector struct {
	src                                         Sources
	orders, refunds, outbox, outboxAge, notices *prometheus.Desc
	held                                        *prometheus.Desc
	queueSize, queueLatency, processed, failed  *prometheus.Desc
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
		queueSize:    d("orderflow_queue_tasks", "asynq tasks per queue and state.", "queue", "state"),
		queueLatency: d("orderflow_queue_latency_seconds", "Age of the oldest pending task per queue.", "queue"),
		processed:    d("orderflow_queue_processed_total", "Tasks processed per queue (asynq's total).", "queue"),
		failed:       d("orderflow_queue_failed_total", "Task attempts that failed per queue (asynq's total).", "queue"),
	}
}

func (c *ledgerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.orders, c.refunds, c.outbox, c.outboxAge, c.notices, c.held, c.queueSize, c.queueLatency, c.processed, c.failed} {
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
	queues, err := c.src.Inspector.Queues()
	if err != nil {
		return
	}
	for _, q := range queues {
		info, err := c.src.Inspector.GetQueueInfo(q)
		if err != nil {
			continue
		}
		for state, n := range map[string]int{"pending": info.Pending, "active": info.Active, "scheduled": info.Scheduled,
			"retry": info.Retry, "archived": info.Archived, "completed": info.Completed} {
			gauge(c.queueSize, float64(n), q, state)
		}
		gauge(c.queueLatency, info.Latency.Seconds(), q)
		ch <- prometheus.MustNewConstMetric(c.processed, prometheus.CounterValue, float64(info.ProcessedTotal), q)
		ch <- prometheus.MustNewConstMetric(c.failed, prometheus.CounterValue, float64(info.FailedTotal), q)
	}
}

var registerOnce sync.Map

// Handler serves /metrics: this process's counters plus the scrape-time
// ledger and queue gauges.
func Handler(m *Metrics, src Sources) http.Handler {
	if _, loaded := registerOnce.LoadOrStore(m, true); !loaded {
		m.Registry.MustRegister(newLedgerCollector(src))
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
