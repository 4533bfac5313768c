package tasks

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The settle schedule is the seed's 1, 2, 4, 8, 16 s with asynq's retry
// count (0 after the first failure), and the refund schedule holds its last step.
func TestRetrySchedules(t *testing.T) {
	s := time.Second
	table := NewTable(Config{
		ActivateRetryDelay: 100 * time.Millisecond,
		SettleRetryDelays:  []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s},
		RefundRetryDelays:  []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 30 * time.Minute},
	})
	delays := func(typ string, n int) []time.Duration {
		var out []time.Duration
		for i := range n {
			out = append(out, table[typ].Delay(i))
		}
		return out
	}
	for _, tc := range []struct {
		typ  string
		n    int
		want []time.Duration
	}{
		{TypeGroupSettle, 5, []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s}},
		{TypeRefundExecute, 6, []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 30 * time.Minute, 30 * time.Minute, 30 * time.Minute}},
		{TypeOrderActivate, 7, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond, 3200 * time.Millisecond}},
	} {
		if diff := cmp.Diff(tc.want, delays(tc.typ, tc.n)); diff != "" {
			t.Errorf("%s delays (-want +got):\n%s", tc.typ, diff)
		}
	}
	if got := table[TypeGroupSettle].MaxRetry; got != 5 {
		t.Errorf("group settle MaxRetry = %d, want 5 (one per delay)", got)
	}
}

// A delay lands on the nearest whole second (asynq truncates retry times to
// seconds), so it is never off by more than half a second.
func TestAlignToSecond(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	for _, tc := range []struct {
		frac, d, want time.Duration
	}{
		{100 * time.Millisecond, 4 * time.Second, 3900 * time.Millisecond},
		{700 * time.Millisecond, 4 * time.Second, 4300 * time.Millisecond},
		{700 * time.Millisecond, 50 * time.Millisecond, 300 * time.Millisecond},
		{100 * time.Millisecond, 50 * time.Millisecond, 0},
	} {
		if got := alignToSecond(base.Add(tc.frac), tc.d); got != tc.want {
			t.Errorf("alignToSecond(+%v, %v) = %v, want %v", tc.frac, tc.d, got, tc.want)
		}
	}
}

// The queues the registry is restored with are the queues the worker
// serves: every weighted queue has a type, every type a weighted queue.
func TestTableQueuesAreTheWeightedQueues(t *testing.T) {
	var weighted []string
	for q := range QueueWeights {
		weighted = append(weighted, q)
	}
	slices.Sort(weighted)
	if diff := cmp.Diff(weighted, NewTable(Config{}).Queues()); diff != "" {
		t.Errorf("table queues (-weighted +table):\n%s", diff)
	}
}
