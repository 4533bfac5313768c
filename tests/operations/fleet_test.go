package operations

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"
	"orderflow/queue/worker"
	"orderflow/svc"

	"github.com/hibiken/asynq"
)

// Three queue processes, each with its own service context, run the
// continuous sweep (every second) for three and a half periods:
// the fleet runs it once per period, not once per process. Each run is the
// asynq task periodic:sweep:<slot ms>; the completed set is watched
// throughout (retention is short, so entries expire), and asynq's processed
// counter for the queue shows no run went unseen.
func TestFleetRunsPeriodicJobOncePerPeriod(t *testing.T) {
	const period = time.Second
	s := testenv.Start(t, testenv.Options{NoWorker: true, Configure: func(c *svc.Config) {
		c.SweepInterval = svc.Duration(period)
		c.NotifyInterval = svc.Duration(time.Hour) // one run at start-up, then quiet
		c.ReconcileSchedule = "0 3 * * *"
	}})
	ctx := context.Background()
	processedBefore := processedToday(t, s.SC.Inspector, tasks.QueueLow)

	// Start a little after a slot began, so no boundary is near either edge
	// of the window.
	time.Sleep(time.Until(time.Now().Truncate(period).Add(period + 3*period/10)))
	windowStart := time.Now()
	var workers []*worker.Worker
	for range 3 {
		workers = append(workers, s.StartWorker(t))
	}

	// Watch the completed sweep tasks until 3.5 periods have passed.
	runs := map[string]map[time.Time]bool{} // task ID → completion times seen
	watch := func() {
		infos, err := s.SC.Inspector.ListCompletedTasks(tasks.QueueLow, asynq.PageSize(1000))
		if err != nil && !errors.Is(err, asynq.ErrQueueNotFound) {
			t.Fatalf("list completed: %v", err)
		}
		for _, ti := range infos {
			if !strings.HasPrefix(ti.ID, tasks.TypeSweep+":") {
				continue
			}
			if runs[ti.ID] == nil {
				runs[ti.ID] = map[time.Time]bool{}
			}
			runs[ti.ID][ti.CompletedAt] = true
		}
	}
	windowEnd := windowStart.Add(3*period + 3*period/10)
	for time.Now().Before(windowEnd) {
		watch()
		time.Sleep(100 * time.Millisecond)
	}
	stopAt := time.Now()
	for _, w := range workers {
		w.Shutdown(ctx)
	}
	watch()

	// The slots: the one in progress when the fleet started (run at start-up)
	// and every slot that began during the window.
	var want []int64
	for slot := windowStart.Truncate(period); !slot.After(stopAt); slot = slot.Add(period) {
		want = append(want, slot.UnixMilli())
	}
	started := 0 // slots that began inside the planned window
	for _, ms := range want {
		if at := time.UnixMilli(ms); !at.Before(windowStart) && at.Before(windowEnd) {
			started++
		}
	}
	var got []int64
	for id, times := range runs {
		ms, err := strconv.ParseInt(strings.TrimPrefix(id, tasks.TypeSweep+":"), 10, 64)
		if err != nil {
			t.Fatalf("sweep task ID %q does not end in a slot", id)
		}
		if ms%period.Milliseconds() != 0 {
			t.Errorf("task %s: slot %d is not aligned to the %v period", id, ms, period)
		}
		if len(times) != 1 {
			t.Errorf("slot %s ran %d times, want once", time.UnixMilli(ms).UTC().Format("15:04:05.000"), len(times))
		}
		got = append(got, ms)
	}
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	t.Logf("window %s → %s (%v): %d slots began in it, plus the one in progress at start-up; sweep runs %v",
		windowStart.UTC().Format("15:04:05.000"), stopAt.UTC().Format("15:04:05.000"), stopAt.Sub(windowStart).Round(time.Millisecond),
		started, slotTimes(got))
	if started != 3 {
		t.Errorf("%d slots began in a 3.5-period window, want 3 (timing of the test itself is off)", started)
	}
	if last := want[len(want)-1]; len(got) == len(want)-1 && stopAt.Sub(time.UnixMilli(last)) < 300*time.Millisecond {
		// The machine was slow enough that a slot began just before the
		// fleet stopped; it may fairly not have run yet.
		t.Logf("slot %s began %v before the stop; not required", slotTimes([]int64{last}), stopAt.Sub(time.UnixMilli(last)))
		want = want[:len(want)-1]
	}
	if !equal(got, want) {
		t.Fatalf("sweep runs %v, want one per slot: %v", slotTimes(got), slotTimes(want))
	}

	// Nothing ran that the completed set did not show, and nothing failed:
	// every processed task of the low queue is a distinct completed one.
	info, err := s.SC.Inspector.GetQueueInfo(tasks.QueueLow)
	if err != nil {
		t.Fatal(err)
	}
	if info.Archived+info.Retry != 0 {
		t.Errorf("low queue: %d archived, %d retry; want 0 (no run failed)", info.Archived, info.Retry)
	}
	all, err := s.SC.Inspector.ListCompletedTasks(tasks.QueueLow, asynq.PageSize(1000))
	if err != nil {
		t.Fatal(err)
	}
	others := 0
	for _, ti := range all {
		if !strings.HasPrefix(ti.ID, tasks.TypeSweep+":") {
			others++ // the start-up reconciliation and notification runs
		}
	}
	if processed := processedToday(t, s.SC.Inspector, tasks.QueueLow) - processedBefore; processed != len(got)+others {
		t.Errorf("asynq processed %d low-queue tasks, but %d sweep + %d other runs were seen: a run went unseen", processed, len(got), others)
	}
}

// processedToday is asynq's count of tasks processed in a queue over the
// last two days (so a run across midnight still adds up).
func processedToday(t *testing.T, in *asynq.Inspector, queue string) int {
	t.Helper()
	queues, err := in.Queues()
	if err != nil {
		t.Fatalf("queues: %v", err)
	}
	if !contains(queues, queue) {
		return 0
	}
	stats, err := in.History(queue, 2)
	if err != nil {
		t.Fatalf("queue history: %v", err)
	}
	n := 0
	for _, d := range stats {
		n += d.Processed
	}
	return n
}

func slotTimes(ms []int64) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = time.UnixMilli(m).UTC().Format("15:04:05")
	}
	return out
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
