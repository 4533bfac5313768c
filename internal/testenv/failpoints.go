package testenv

import (
	"sync"
	"testing"
	"time"

	"orderflow/internal/infra/failpoint"
	"orderflow/model"
)

// inProcessFailpoints serialises the tests of one package that arm
// failpoints in the test process: a point holds one setting, so two tests
// arming the same point for different orders or groups would overwrite
// each other. (Failpoints armed in a child process are that process's own.)
var inProcessFailpoints sync.Mutex

// LockFailpoints holds the test process's failpoints for t until it ends.
func LockFailpoints(t testing.TB) {
	inProcessFailpoints.Lock()
	t.Cleanup(inProcessFailpoints.Unlock)
}

// PayUntilFailed pays an order (tradeNo "" lets the simulator pick one)
// with its delivery failing every attempt, the activate-deliver failpoint
// armed for it in the test process, and waits until it is failed. The
// point stays armed: the caller disarms it when a retry should finish.
func (s *Stack) PayUntilFailed(t testing.TB, o OrderView, tradeNo string, within time.Duration) *model.Order {
	t.Helper()
	if err := failpoint.Enable(failpoint.ActivateDeliver, "error@"+o.OrderNo); err != nil {
		t.Fatal(err)
	}
	s.PayOrder(t, o, tradeNo)
	return s.WaitStatus(t, o.OrderNo, model.OrderFailed, within)
}
