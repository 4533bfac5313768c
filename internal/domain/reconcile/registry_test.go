package reconcile_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"orderflow/internal/infra/metrics"
	"orderflow/internal/infra/tasks"

	"github.com/google/go-cmp/cmp"
)

// asynq keeps the names of its queues in one set, added to once per
// process and queue; a partial Redis loss that takes the set leaves
// asynqmon and the asynq_* metrics blind to every queue, even to those the
// same processes go on using, until they restart. A sweep pass puts every
// queue of the task table back.
func TestSweepRestoresQueueRegistry(t *testing.T) {
	t.Parallel()
	s := startSweep(t, 50)
	ctx := context.Background()
	var want []string
	for q := range tasks.QueueWeights {
		want = append(want, q)
	}
	slices.Sort(want)
	enqueue := func(typ, no string) {
		t.Helper()
		task, err := s.SC.Tasks.NewTask(typ, tasks.ID(typ, no, 1), tasks.Encode(tasks.OrderPayload{OrderNo: no, Gen: 1}), s.SC.Clock.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SC.Asynq.EnqueueContext(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	// One task on every queue: each gets registered, as in production.
	for typ, spec := range s.SC.Tasks {
		enqueue(typ, "R-"+spec.Queue)
	}
	if got := queues(t, s.SC.Inspector.Queues); !cmp.Equal(got, want) {
		t.Fatalf("before the loss: queues %v, want %v", got, want)
	}

	// The loss, then more work on the critical queue by the same process:
	// asynq does not register the queue again.
	if err := s.SC.Redis.Del(ctx, tasks.QueueRegistryKey).Err(); err != nil {
		t.Fatal(err)
	}
	enqueue(tasks.TypeOrderActivate, "R-after")
	t.Logf("after the loss and another enqueue: queues %v", queues(t, s.SC.Inspector.Queues))

	sweepPass(t, s)
	if diff := cmp.Diff(want, queues(t, s.SC.Inspector.Queues)); diff != "" {
		t.Errorf("queues asynq lists after a sweep pass (-want +got):\n%s", diff)
	}
	// asynq's metrics exporter reads the same set.
	rec := httptest.NewRecorder()
	metrics.Handler(s.UC.Metrics, metrics.Sources{Store: s.SC.Store, Inspector: s.SC.Inspector, Clock: s.SC.Clock}).
		ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, q := range want {
		if line := `asynq_queue_size{queue="` + q + `"}`; !strings.Contains(rec.Body.String(), line) {
			t.Errorf("/metrics has no %s after a sweep pass", line)
		}
	}
}

func queues(t *testing.T, list func() ([]string, error)) []string {
	t.Helper()
	qs, err := list()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(qs)
	return qs
}
