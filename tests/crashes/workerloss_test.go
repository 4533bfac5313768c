package crashes

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"orderflow/internal/infra/failpoint"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"
)

// workerLease is the lease these tests run with; the claim timeout is far
// longer, so only the lease can be what hands a lost worker's orders on.
const workerLease = 2 * time.Second

func leaseStack(t *testing.T) *testenv.Stack {
	return testenv.Start(t, testenv.Options{NoWorker: true, Configure: func(c *svc.Config) {
		c.ClaimTimeout = svc.Duration(2 * time.Minute)
		c.ActivateTimeout = svc.Duration(time.Minute)
		c.WorkerLease = svc.Duration(workerLease)
	}})
}

// claimedByChild places one order of each kind and has a child worker claim
// them all and hold them at activate/after-claim (a sleep of hold), then
// returns the worker and the orders, every one claimed.
func claimedByChild(t *testing.T, s *testenv.Stack, sh shop, hold time.Duration) (*testenv.ChildWorker, []*placed) {
	t.Helper()
	var group []*placed
	for _, kind := range []string{"card", "recharge", "subscription"} {
		group = append(group, place(t, s, sh, kind, 2))
	}
	w := testenv.StartChildWorker(t, testenv.Binary("queue"), s.Config,
		failpoint.ActivateAfterClaim+"=sleep("+hold.String()+")", "ORDERFLOW_LOG_LEVEL=info")
	for _, p := range group {
		p.paidAt = time.Now()
		s.PayOrder(t, p.order, "")
	}
	for _, p := range group {
		s.WaitStatus(t, p.order.OrderNo, model.OrderClaimed, 30*time.Second)
	}
	testenv.Eventually(t, 10*time.Second, "the worker held at after-claim for every order", func() (bool, error) {
		n := strings.Count(w.Out.String(), "failpoint "+failpoint.ActivateAfterClaim+" fired")
		return n >= len(group), fmt.Errorf("%d of %d orders at the failpoint", n, len(group))
	})
	return w, group
}

// TestKilledWorkerTakenOverWithinItsLease kills (-9) a worker holding three
// claims; a worker started after it finds the lapsed lease and finishes
// every order well before the claim timeout, each delivered once.
func TestKilledWorkerTakenOverWithinItsLease(t *testing.T) {
	t.Parallel()
	s := leaseStack(t)
	sh := newShop(t, s, 10)
	a, group := claimedByChild(t, s, sh, time.Minute)
	a.Kill()
	killed := time.Now()

	s.StartWorker(t)
	for _, p := range group {
		waitStatus(t, s, p.order.OrderNo, "finished", 30*time.Second)
	}
	took := time.Since(killed)
	t.Logf("every order of the killed worker finished %v after the kill (lease %v, claim timeout 2m)", took.Round(10*time.Millisecond), workerLease)
	finishedBy := time.Now()
	for _, p := range group {
		checkTakenOverOnce(t, s, p, finishedBy)
	}
}

// TestFrozenWorkerPastItsLeaseDeliversNothingTwice stops a worker (SIGSTOP)
// while it holds three claims, past its lease: another worker takes the
// orders over and finishes them. Then the frozen worker resumes where it
// stopped — its finalize names the claim token it no longer holds, so it
// delivers nothing: every order is delivered exactly once.
func TestFrozenWorkerPastItsLeaseDeliversNothingTwice(t *testing.T) {
	t.Parallel()
	s := leaseStack(t)
	sh := newShop(t, s, 10)
	a, group := claimedByChild(t, s, sh, 3*time.Second)
	a.SignalT(t, syscall.SIGSTOP)
	defer func() { _ = a.Signal(syscall.SIGCONT) }()

	s.StartWorker(t)
	for _, p := range group {
		waitStatus(t, s, p.order.OrderNo, "finished", 30*time.Second)
	}
	a.SignalT(t, syscall.SIGCONT)
	testenv.Eventually(t, 20*time.Second, "the resumed worker finds every claim gone", func() (bool, error) {
		n := strings.Count(a.Out.String(), "claim lost before finalize")
		return n >= len(group), fmt.Errorf("%d of %d deliveries refused so far", n, len(group))
	})
	finishedBy := time.Now()
	for _, p := range group {
		checkTakenOverOnce(t, s, p, finishedBy)
	}
	if a.Exited() {
		t.Errorf("the resumed worker exited; output:\n%s", a.Out.String())
	}
}

// checkTakenOverOnce: the order went back to paid as a lost worker's claim
// (not a stuck one), finished once, and its effect is in the ledger once.
func checkTakenOverOnce(t *testing.T, s *testenv.Stack, p *placed, finishedBy time.Time) {
	t.Helper()
	v := adminGetOrder(t, s, p.order.OrderNo)
	if n := v.count("claimed", "paid", "worker lost"); n < 1 {
		t.Errorf("order %s: no claimed→paid \"worker lost\" event; events %+v", p.order.OrderNo, v.Events)
	}
	if n := v.count("claimed", "paid", "stuck claim recovered"); n != 0 {
		t.Errorf("order %s: recovered as a stuck claim, not a lost worker's; events %+v", p.order.OrderNo, v.Events)
	}
	if n := v.count("claimed", "finished", ""); n != 1 {
		t.Errorf("order %s: %d claimed→finished events, want 1; events %+v", p.order.OrderNo, n, v.Events)
	}
	checkDeliveredOnce(t, s, p, finishedBy)
}
