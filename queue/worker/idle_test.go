package worker_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/queue/worker"
	"orderflow/svc"
)

// idleBudget is the most Redis commands a second an idle worker may send.
const idleBudget = 50

// An idle worker at the production check intervals costs Redis at most
// idleBudget commands a second (counted by a proxy only it talks through);
// then an order paid after seconds of idleness still finishes promptly, and
// an order left unpaid is closed on time by its scheduled close task.
func TestIdleWorkerCostsRedisLittleAndStaysPrompt(t *testing.T) {
	t.Parallel()
	s := testenv.Start(t, testenv.Options{NoWorker: true, Configure: func(c *svc.Config) {
		d := svc.Defaults()
		c.TaskCheckInterval, c.DelayedTaskCheckInterval = d.TaskCheckInterval, d.DelayedTaskCheckInterval
		c.SweepInterval, c.NotifyInterval = d.SweepInterval, d.NotifyInterval
		c.OrderTTL = svc.Duration(3 * time.Second)
	}})
	counter := testenv.StartRedisCounter(t, testenv.RedisAddr())
	startCountedWorker(t, s, counter.Addr())
	s.WaitReconciled(t, 30*time.Second)

	time.Sleep(2 * time.Second) // settle: start-up tasks done, the worker idle
	before, start := counter.Counts(), time.Now()
	time.Sleep(3 * time.Second)
	after, took := counter.Counts(), time.Since(start)
	perSec := rate(before, after, took)
	total := 0.0
	for _, v := range perSec {
		total += v
	}
	t.Logf("idle worker: %.1f Redis commands/s", total)
	for _, line := range topShapes(perSec) {
		t.Log("  " + line)
	}
	if total > idleBudget {
		t.Errorf("idle worker sends %.1f Redis commands/s, want ≤ %d", total, idleBudget)
	}

	// Paid after ≥ 2 s of idleness: the activation waits little more than
	// it would on a busy worker.
	pid := s.NewCardProduct(t, "idle", 100, 2)
	_, buyer := s.NewUser(t, "idle-buyer", 0)
	paid := buyer.CreateOrder(t, pid, 1)
	unpaid := buyer.CreateOrder(t, pid, 1)
	time.Sleep(2 * time.Second)
	if _, st, err := s.Pay.Pay(context.Background(), paid.OrderNo, paid.AmountCents, ""); err != nil || st != 200 {
		t.Fatalf("pay %s: status %d, err %v", paid.OrderNo, st, err)
	}
	o := s.WaitStatus(t, paid.OrderNo, model.OrderFinished, 5*time.Second)
	lag := o.FinishedAt.Sub(*o.PaidAt)
	t.Logf("paid after 2 s idle: finished %v after payment", lag)
	if lag > 250*time.Millisecond {
		t.Errorf("order paid after idleness finished %v after payment, want ≤ 250ms", lag)
	}

	// Its close task was scheduled at a whole second and forwarded by the
	// idle worker: closed within the second of rounding plus a forwarder round.
	c := s.WaitStatus(t, unpaid.OrderNo, model.OrderClosed, 10*time.Second)
	lag = c.ClosedAt.Sub(c.ExpireAt)
	t.Logf("unpaid: closed %v after its expiry", lag)
	if lag > 1500*time.Millisecond {
		t.Errorf("unpaid order closed %v after its expiry, want ≤ 1.5s", lag)
	}
}

// startCountedWorker starts the real worker wiring on the stack's database,
// talking to Redis through addr.
func startCountedWorker(t *testing.T, s *testenv.Stack, addr string) {
	t.Helper()
	cfg := s.Config
	cfg.RedisAddr = addr
	sc, err := svc.New(cfg, s.SC.Log.Named("worker"))
	if err != nil {
		t.Fatal(err)
	}
	w := worker.New(sc, sc.NewUseCases())
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w.Shutdown(context.Background())
		_ = sc.Close()
	})
}

// rate is each command shape's count between two snapshots, per second.
func rate(before, after map[string]int, d time.Duration) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if n := v - before[k]; n > 0 {
			out[k] = float64(n) / d.Seconds()
		}
	}
	return out
}

// topShapes lists the shapes, most frequent first.
func topShapes(perSec map[string]float64) []string {
	keys := make([]string, 0, len(perSec))
	for k := range perSec {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return perSec[keys[i]] > perSec[keys[j]] })
	lines := make([]string, len(keys))
	for i, k := range keys {
		lines[i] = fmt.Sprintf("%6.1f/s  %s", perSec[k], k)
	}
	return lines
}
