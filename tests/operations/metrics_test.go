package operations

import (
	"context"
	"strings"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

// After a small workload — three card orders delivered, one cancelled by
// its buyer (the API closes it), one left to expire (the worker closes it)
// and then paid late (refunded) — both processes' /metrics carry the values
// the workload implies: the ledger gauges agree everywhere, the counters
// sit on the process that did the work, and the admin stats agree.
func TestMetricsAfterWorkload(t *testing.T) {
	s := testenv.Start(t, testenv.Options{Configure: func(c *svc.Config) { c.OrderTTL = svc.Duration(4 * time.Second) }})
	pid := s.NewCardProduct(t, "metrics-card", 300, 10)
	_, buyer := s.NewUser(t, "metrics-buyer", 0)

	late := buyer.CreateOrder(t, pid, 1) // left to expire, then paid
	var delivered []testenv.OrderView
	for range 3 {
		delivered = append(delivered, buyer.CreateOrder(t, pid, 1))
	}
	payAll(t, s, delivered)
	cancelled := buyer.CreateOrder(t, pid, 1)
	if st := buyer.Do(t, "POST", "/api/v1/orders/"+cancelled.OrderNo+"/cancel", nil, nil); st != 200 {
		t.Fatalf("cancel: status %d", st)
	}
	for _, o := range delivered {
		s.WaitStatus(t, o.OrderNo, model.OrderFinished, 15*time.Second)
	}
	s.WaitStatus(t, late.OrderNo, model.OrderClosed, 15*time.Second)
	s.PayOrder(t, late, "")
	s.WaitStatus(t, late.OrderNo, model.OrderRefunded, 15*time.Second)
	testenv.Eventually(t, 10*time.Second, "outbox drained", func() (bool, error) {
		return s.Count(t, `SELECT COUNT(*) FROM outbox`) == 0, nil
	})

	apiURL, workerURL := s.APIURL+"/metrics", "http://"+s.Worker.Addr()+"/metrics"
	want := map[model.OrderStatus]float64{model.OrderFinished: 3, model.OrderClosed: 1, model.OrderRefunded: 1}
	for where, url := range map[string]string{"api": apiURL, "worker": workerURL} {
		m := scrape(t, url)
		// Scrape-time gauges: the same ledger truth on every process.
		for st := model.OrderPending; st <= model.OrderRefunded; st++ {
			wantMetric(t, where, m, want[st], "orderflow_orders", "status", st.String())
			if got := float64(countByStatus(t, s, st)); got != want[st] {
				t.Errorf("ledger: %d orders %s, want %v", int(got), st, want[st])
			}
		}
		wantMetric(t, where, m, 1, "orderflow_refunds", "status", "succeeded")
		wantMetric(t, where, m, 0, "orderflow_refunds", "status", "processing")
		wantMetric(t, where, m, 0, "orderflow_refunds", "status", "manual")
		wantMetric(t, where, m, 0, "orderflow_outbox_backlog")
		wantMetric(t, where, m, 0, "orderflow_outbox_oldest_age_seconds")
		undelivered, err := s.SC.Store.CountUndelivered(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		wantMetric(t, where, m, float64(undelivered), "orderflow_notifications_pending")
		// asynq's own series (its collector, not a copy of ours).
		for _, q := range []string{"critical", "close", "default", "low"} {
			for _, state := range []string{"pending", "active", "scheduled", "retry", "archived", "completed"} {
				if _, ok := value(m, "asynq_tasks_enqueued_total", "queue", q, "state", state); !ok {
					t.Errorf("%s: asynq_tasks_enqueued_total{queue=%q,state=%q} missing", where, q, state)
				}
			}
			if _, ok := value(m, "asynq_queue_latency_seconds", "queue", q); !ok {
				t.Errorf("%s: asynq_queue_latency_seconds{queue=%q} missing", where, q)
			}
		}
		wantMetric(t, where, m, 0, "asynq_tasks_enqueued_total", "queue", "critical", "state", "archived")
		if n, _ := value(m, "asynq_tasks_processed_total", "queue", "critical"); n < 3 {
			t.Errorf("%s: asynq_tasks_processed_total{queue=critical} = %v, want ≥ 3 (three activations)", where, n)
		}
		for _, sm := range m {
			if strings.HasPrefix(sm.name, "orderflow_queue_") {
				t.Errorf("%s: %s is exported; asynq's own asynq_* series replace it", where, sm.name)
			}
		}
		// Each periodic job's next slot is ahead, its last claimed one behind.
		now := float64(time.Now().UnixMilli()) / 1000
		for _, j := range s.Config.PeriodicJobs() {
			if next, ok := value(m, "orderflow_periodic_next_slot_timestamp_seconds", "job", j.Type); !ok || next <= now-1 {
				t.Errorf("%s: orderflow_periodic_next_slot_timestamp_seconds{job=%q} = %v (present %v), want after now %v", where, j.Type, next, ok, now)
			}
		}
		if last, ok := value(m, "orderflow_periodic_last_slot_timestamp_seconds", "job", "periodic:sweep"); !ok || last > now || last < now-3600 {
			t.Errorf("%s: orderflow_periodic_last_slot_timestamp_seconds{job=periodic:sweep} = %v (present %v), want within the last hour", where, last, ok)
		}
		lintMetrics(t, where, url)
		// No claim went stuck in this workload, on any process.
		wantMetric(t, where, m, 0, "orderflow_stuck_claims_recovered_total")
		wantMetric(t, where, m, 0, "orderflow_order_close_total", "result", "failure")
		wantMetric(t, where, m, 0, "orderflow_refund_attempts_total", "result", "failure")
	}

	// Per-process counters: the API closed the cancelled order, the worker
	// closed the expired one, delivered three orders and sent one refund.
	api, wrk := scrape(t, apiURL), scrape(t, workerURL)
	wantMetric(t, "api", api, 1, "orderflow_order_close_total", "result", "success")
	wantMetric(t, "api", api, 0, "orderflow_orders_activated_total")
	wantMetric(t, "api", api, 0, "orderflow_activation_latency_seconds_count")
	wantMetric(t, "api", api, 0, "orderflow_refund_attempts_total", "result", "success")
	wantMetric(t, "worker", wrk, 1, "orderflow_order_close_total", "result", "success")
	wantMetric(t, "worker", wrk, 3, "orderflow_orders_activated_total")
	wantMetric(t, "worker", wrk, 3, "orderflow_activation_latency_seconds_count")
	wantMetric(t, "worker", wrk, 3, "orderflow_activation_latency_seconds_bucket", "le", "+Inf")
	wantMetric(t, "worker", wrk, 1, "orderflow_refund_attempts_total", "result", "success")
	if sum, _ := value(wrk, "orderflow_activation_latency_seconds_sum"); sum <= 0 || sum > 3*15 {
		t.Errorf("worker: activation latency sum %vs, want within (0, 45]", sum)
	}

	// The admin stats read the same sources.
	var st struct {
		Orders               map[string]int64 `json:"orders"`
		Refunds              map[string]int64 `json:"refunds"`
		RefundsInManual      int64            `json:"refunds_in_manual"`
		OutboxBacklog        int64            `json:"outbox_backlog"`
		PendingNotifications int64            `json:"pending_notifications"`
		CloseSuccessRate     *float64         `json:"close_success_rate"`
		RefundFailureRate    *float64         `json:"refund_failure_rate"`
		Queues               map[string]map[string]int
		Fleet                map[string]int64 `json:"fleet_counters"`
		Periodic             map[string]struct {
			Schedule string     `json:"schedule"`
			LastSlot *time.Time `json:"last_slot"`
			NextSlot time.Time  `json:"next_slot"`
		} `json:"periodic"`
	}
	if code := s.Admin.Do(t, "GET", "/api/v1/admin/stats", nil, &st); code != 200 {
		t.Fatalf("admin stats: status %d", code)
	}
	for status, n := range want {
		if st.Orders[status.String()] != int64(n) {
			t.Errorf("stats: orders[%s] = %d, want %v (all: %v)", status, st.Orders[status.String()], n, st.Orders)
		}
	}
	for name, n := range st.Orders {
		if n != 0 && want[statusByName(t, name)] == 0 {
			t.Errorf("stats: orders[%s] = %d, want 0", name, n)
		}
	}
	if st.Refunds["succeeded"] != 1 || st.RefundsInManual != 0 {
		t.Errorf("stats: refunds %v, in manual %d; want 1 succeeded, 0 manual", st.Refunds, st.RefundsInManual)
	}
	if st.CloseSuccessRate == nil || *st.CloseSuccessRate != 1 {
		t.Errorf("stats: close_success_rate = %v, want 1", deref(st.CloseSuccessRate))
	}
	if st.RefundFailureRate == nil || *st.RefundFailureRate != 0 {
		t.Errorf("stats: refund_failure_rate = %v, want 0", deref(st.RefundFailureRate))
	}
	if st.OutboxBacklog != 0 || st.PendingNotifications != mustUndelivered(t, s) {
		t.Errorf("stats: outbox backlog %d, pending notifications %d", st.OutboxBacklog, st.PendingNotifications)
	}
	if st.Fleet["close_succeeded"] != 2 || st.Fleet["close_failed"] != 0 {
		t.Errorf("stats: fleet counters %v, want close_succeeded 2 (api + worker), close_failed 0", st.Fleet)
	}
	if _, ok := st.Queues["critical"]; !ok {
		t.Errorf("stats: queues %v lack critical", st.Queues)
	}
	for _, j := range s.Config.PeriodicJobs() {
		p, ok := st.Periodic[j.Type]
		switch {
		case !ok:
			t.Errorf("stats: periodic lacks %s: %v", j.Type, st.Periodic)
		case p.Schedule != j.When.String() || !p.NextSlot.After(time.Now().Add(-time.Second)):
			t.Errorf("stats: periodic[%s] = %+v, want schedule %q and a next slot ahead", j.Type, p, j.When.String())
		case j.Type == "periodic:sweep" && (p.LastSlot == nil || p.LastSlot.After(time.Now())):
			t.Errorf("stats: periodic[%s].last_slot = %v, want the sweep's last claimed slot", j.Type, p.LastSlot)
		}
	}
}

// asynqLintExceptions are promlint's findings on asynq's own collector,
// whose names standard dashboards depend on (gauges named *_total): known,
// and not ours to rename. Any other finding fails.
var asynqLintExceptions = map[string]bool{
	"asynq_tasks_enqueued_total: non-counter metrics should not have \"_total\" suffix": true,
	"asynq_queue_paused_total: non-counter metrics should not have \"_total\" suffix":   true,
}

// lintMetrics runs client_golang's promlint (promtool's metric checks) over
// a /metrics page: every orderflow_* name, type, help and unit passes.
func lintMetrics(t *testing.T, where, url string) {
	t.Helper()
	st, body, err := get(url, nil)
	if err != nil || st != 200 {
		t.Fatalf("GET %s: status %d, err %v", url, st, err)
	}
	problems, err := promlint.New(strings.NewReader(body)).Lint()
	if err != nil {
		t.Fatalf("%s: promlint: %v", where, err)
	}
	for _, p := range problems {
		if !asynqLintExceptions[p.Metric+": "+p.Text] {
			t.Errorf("%s: promlint: %s: %s", where, p.Metric, p.Text)
		}
	}
}

func statusByName(t *testing.T, name string) model.OrderStatus {
	t.Helper()
	for st := model.OrderPending; st <= model.OrderRefunded; st++ {
		if st.String() == name {
			return st
		}
	}
	t.Fatalf("unknown order status %q", name)
	return 0
}

func mustUndelivered(t *testing.T, s *testenv.Stack) int64 {
	t.Helper()
	n, err := s.SC.Store.CountUndelivered(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
