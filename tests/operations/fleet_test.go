package operations

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"
	"orderflow/queue/worker"
	"orderflow/svc"
)

// Three queue processes, each with its own service context, each running
// the periodic jobs as asynq Scheduler entries (the sweep every second):
// asynqmon's scheduler-entries API lists every job of every worker with its
// next run, and the fleet runs each job once per slot, not once per
// process — counted twice: the slots claimed in the ledger, and the runs
// each worker's metrics say it did (the others' fires found the slot taken).
func TestFleetRunsPeriodicJobOncePerPeriod(t *testing.T) {
	const period = time.Second
	s := testenv.Start(t, testenv.Options{NoWorker: true, Configure: func(c *svc.Config) {
		c.SweepInterval = svc.Duration(period)
		c.NotifyInterval = svc.Duration(time.Hour) // one run at start-up, then quiet
		c.ReconcileSchedule = "0 3 * * *"          // its last slot caught up at start-up, once
	}})
	ctx := context.Background()

	// Start a little after a slot began, so no boundary is near either edge
	// of the window.
	time.Sleep(time.Until(time.Now().Truncate(period).Add(period + 3*period/10)))
	windowStart := time.Now()
	var workers []*worker.Worker
	for range 3 {
		workers = append(workers, s.StartWorker(t))
	}
	jobs := s.Config.PeriodicJobs()

	// While they run, asynqmon lists each job once per worker's Scheduler.
	testenv.Eventually(t, 5*time.Second, "every worker's scheduler entries listed", func() (bool, error) {
		entries, err := schedulerEntries(s)
		if err != nil {
			return false, err
		}
		for _, j := range jobs {
			if n := len(entries[j.Type]); n != len(workers) {
				return false, fmt.Errorf("%s: %d entries, want %d (one per worker): %v", j.Type, n, len(workers), entries)
			}
			for _, e := range entries[j.Type] {
				if e.Spec != j.When.Spec() || e.NextEnqueueAt == "" {
					return false, fmt.Errorf("%s: entry %+v, want spec %q and a next run", j.Type, e, j.When.Spec())
				}
			}
		}
		return true, nil
	})

	windowEnd := windowStart.Add(3*period + 3*period/10)
	time.Sleep(time.Until(windowEnd))
	stopAt := time.Now()
	for _, w := range workers {
		w.Shutdown(ctx)
	}

	// The fleet's runs: what each worker's claim middleware counted.
	ran, skipped := map[string]float64{}, map[string]float64{}
	for _, w := range workers {
		for _, j := range jobs {
			ran[j.Type] += w.Metrics().PeriodicRunsOf(j.Type, true)
			skipped[j.Type] += w.Metrics().PeriodicRunsOf(j.Type, false)
		}
	}
	// The slots: the one in progress when the fleet started (run at start-up)
	// and every slot that began during the window.
	var want []int64
	for slot := windowStart.Truncate(period); !slot.After(stopAt); slot = slot.Add(period) {
		want = append(want, slot.UnixMilli())
	}
	got := claimedSlots(t, s, tasks.TypeSweep)
	t.Logf("window %s → %s: sweep slots claimed %v; runs %v, skipped %v", windowStart.UTC().Format("15:04:05.000"),
		stopAt.UTC().Format("15:04:05.000"), slotTimes(got), ran, skipped)
	if last := want[len(want)-1]; len(got) == len(want)-1 && stopAt.Sub(time.UnixMilli(last)) < 300*time.Millisecond {
		// The machine was slow enough that a slot began just before the
		// fleet stopped; it may fairly not have run yet.
		want = want[:len(want)-1]
	}
	if !equal(got, want) {
		t.Errorf("sweep slots claimed %v, want one per slot: %v", slotTimes(got), slotTimes(want))
	}
	for _, j := range jobs {
		claims := int64(len(claimedSlots(t, s, j.Type)))
		if float64(claims) != ran[j.Type] {
			t.Errorf("%s: %d slots claimed in the ledger but the workers ran it %v times", j.Type, claims, ran[j.Type])
		}
	}
	if n := len(claimedSlots(t, s, tasks.TypeReconcile)); n != 1 {
		t.Errorf("reconciliation: %d slots claimed, want 1 (its last 03:00, caught up once by three starting workers)", n)
	}
	// Every worker's Scheduler fired every second: two of three fires of a
	// slot found it claimed, so the dedup was exercised, not bypassed.
	if skipped[tasks.TypeSweep] < ran[tasks.TypeSweep] {
		t.Errorf("sweep: %v runs skipped for %v ran, want at least as many (three Schedulers fire each slot)",
			skipped[tasks.TypeSweep], ran[tasks.TypeSweep])
	}
}

// schedulerEntry is one entry of asynqmon's GET /monitoring/api/scheduler_entries.
type schedulerEntry struct {
	Spec          string `json:"spec"`
	TaskType      string `json:"task_type"`
	NextEnqueueAt string `json:"next_enqueue_at"`
}

// schedulerEntries lists asynqmon's scheduler entries by task type.
func schedulerEntries(s *testenv.Stack) (map[string][]schedulerEntry, error) {
	st, body, err := get(s.APIURL+"/monitoring/api/scheduler_entries", func(r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+s.Config.AdminToken)
	})
	if err != nil || st != 200 {
		return nil, fmt.Errorf("scheduler entries: status %d, %v: %s", st, err, body)
	}
	var page struct {
		Entries []schedulerEntry `json:"entries"`
	}
	if err := json.Unmarshal([]byte(body), &page); err != nil {
		return nil, err
	}
	out := map[string][]schedulerEntry{}
	for _, e := range page.Entries {
		out[e.TaskType] = append(out[e.TaskType], e)
	}
	return out, nil
}

// claimedSlots lists a job's claimed slots (Unix ms), oldest first.
func claimedSlots(t *testing.T, s *testenv.Stack, job string) []int64 {
	t.Helper()
	var slots []time.Time
	if err := s.SC.Store.DB().Raw(`SELECT slot_at FROM periodic_slots WHERE job = ? ORDER BY slot_at`, job).Scan(&slots).Error; err != nil {
		t.Fatal(err)
	}
	out := make([]int64, len(slots))
	for i, at := range slots {
		out[i] = at.UnixMilli()
	}
	return out
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
