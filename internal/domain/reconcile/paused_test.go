package reconcile_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"
	"orderflow/model"
)

// A paused queue's tasks are live to the sweep (asynq still holds them),
// so paid orders behind a paused critical queue would wait without a word.
// The sweep tells the admin: one notification per pause — not one per
// pass — and a new one when the queue is paused again; asynq's own
// asynq_queue_paused_total{queue} (what the alert rule reads) shows it too.
func TestSweepReportsAPausedQueueOncePerPause(t *testing.T) {
	t.Parallel()
	s := startSweep(t, 50)
	ctx := context.Background()
	now := s.SC.Clock.Now()
	seedOrders(t, s, "Q", 3, model.OrderPaid, now.Add(-time.Second), now.Add(time.Hour))
	alerts := func() []model.Notification {
		t.Helper()
		ns, err := s.SC.Store.NotificationsByKind(ctx, "queue_paused")
		if err != nil {
			t.Fatal(err)
		}
		return ns
	}
	sweepPass(t, s) // queues the orders' activations: the critical queue exists
	testenv.Eventually(t, 10*time.Second, "the critical queue holds the activations", func() (bool, error) {
		info, err := s.SC.Inspector.GetQueueInfo(tasks.QueueCritical)
		return err == nil && info.Size == 3, err
	})
	if n := len(alerts()); n != 0 {
		t.Fatalf("%d paused-queue alerts before any pause", n)
	}

	pausedAt := time.Now()
	if err := s.SC.Inspector.PauseQueue(tasks.QueueCritical); err != nil {
		t.Fatal(err)
	}
	sweepPass(t, s)
	got := alerts()
	if len(got) != 1 {
		t.Fatalf("%d paused-queue alerts after a pass over a paused critical queue, want 1", len(got))
	}
	if a := got[0]; a.Recipient != "admin" || !strings.Contains(a.Subject, tasks.QueueCritical) || !strings.Contains(a.Message, "paused") {
		t.Errorf("alert %+v: want one for the admin naming the critical queue", a)
	}
	if v := pausedGauge(t, s.APIURL, tasks.QueueCritical); v != "1" {
		t.Errorf(`asynq_queue_paused_total{queue="critical"} = %q, want 1`, v)
	}
	sweepPass(t, s)
	if n := len(alerts()); n != 1 {
		t.Errorf("%d alerts after a second pass over the same pause, want still 1", n)
	}

	// Resumed, nothing new; paused again (asynq stamps a pause in whole
	// seconds, so in a later second), a new alert.
	if err := s.SC.Inspector.UnpauseQueue(tasks.QueueCritical); err != nil {
		t.Fatal(err)
	}
	sweepPass(t, s)
	if n := len(alerts()); n != 1 {
		t.Errorf("%d alerts after a pass over the resumed queue, want still 1", n)
	}
	if v := pausedGauge(t, s.APIURL, tasks.QueueCritical); v != "0" {
		t.Errorf(`asynq_queue_paused_total{queue="critical"} = %q after the resume, want 0`, v)
	}
	testenv.Eventually(t, 3*time.Second, "a second after the first pause", func() (bool, error) {
		return time.Now().Unix() > pausedAt.Unix(), nil
	})
	if err := s.SC.Inspector.PauseQueue(tasks.QueueCritical); err != nil {
		t.Fatal(err)
	}
	sweepPass(t, s)
	if got := alerts(); len(got) != 2 || got[0].NotifyID == got[1].NotifyID {
		t.Errorf("alerts after a second pause: %+v, want two with distinct ids", got)
	}
}

// pausedGauge reads asynq_queue_paused_total of one queue from the API's /metrics.
func pausedGauge(t *testing.T, api, queue string) string {
	t.Helper()
	resp, err := testenv.HTTPClient(10 * time.Second).Get(api + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: status %d, %v", resp.StatusCode, err)
	}
	prefix := `asynq_queue_paused_total{queue="` + queue + `"} `
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			return v
		}
	}
	return "absent"
}
