package webhooks

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"orderflow/internal/infra/failpoint"
	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"
)

// TestEveryEventArrivesThroughFailuresAndCrashes is issue 19's webhook
// done-when: 100 orders live their lives (90 paid and delivered, 10
// cancelled) while the receiver refuses its first 3 deliveries and is killed
// and restarted once, and the first worker is killed -9 right after a
// commit that wrote a webhook, before handing its task to asynq. Every
// event the ledger recorded arrives at least once, every delivery's
// signature verifies, redeliveries carry the same id and body, and no body
// carries a card code.
func TestEveryEventArrivesThroughFailuresAndCrashes(t *testing.T) {
	t.Parallel()
	started := time.Now()
	const secret = "test-webhook-secret"
	const cardPrefix = "WHCARD"
	rcv := newReceiver(t, secret, 3, cardPrefix)
	s := testenv.Start(t, testenv.Options{NoWorker: true, Configure: func(c *svc.Config) {
		c.WebhookURL, c.WebhookSecret = rcv.URL(), secret
		c.WebhookRetryDelay = svc.Duration(50 * time.Millisecond)
	}})
	product := s.NewProduct(t, map[string]any{"sku": "wh-card", "kind": "card", "price_cents": 300})
	s.AddCards(t, product, cardPrefix, 100)

	// 20 buyers, 5 orders each (the pending cap): the last 10 are cancelled.
	var orders []testenv.OrderView
	for b := range 20 {
		_, buyer := s.NewUser(t, fmt.Sprintf("wh-buyer-%d", b), 0)
		for range 5 {
			o := buyer.CreateOrder(t, product, 1)
			if len(orders) >= 90 {
				buyer.Cancel(t, o.OrderNo)
			}
			orders = append(orders, o)
		}
	}

	// The first worker dies after the first commit that writes a webhook
	// delivery task of its own (a finalize: order.finished), before the
	// fast path hands that task to asynq.
	env := []string{"ORDERFLOW_WEBHOOK_URL=" + rcv.URL(), "ORDERFLOW_WEBHOOK_SECRET=" + secret, "ORDERFLOW_WEBHOOK_RETRY_DELAY=50ms"}
	w1 := testenv.StartChildWorker(t, testenv.Binary("queue"), s.Config, failpoint.AfterCommitSend+"=exit@"+tasks.TypeWebhookDeliver, env...)
	for _, o := range orders[:90] {
		s.PayOrder(t, o, "")
	}
	if code := w1.WaitExit(t, 60*time.Second); code != failpoint.ExitCode {
		t.Fatalf("worker exited %d, want %d (died at the failpoint); output:\n%s", code, failpoint.ExitCode, w1.Out.String())
	}
	if out := w1.Out.String(); !strings.Contains(out, "failpoint "+failpoint.AfterCommitSend+" fired") {
		t.Fatalf("worker exited 77 but not at the armed point; output:\n%s", out)
	}
	// The orders it finished: the kill came after at least one finalize's
	// commit, whose webhook had not been handed over.
	finishedAtCrash := testenv.Rows[string](t, s, `SELECT order_no FROM orders WHERE status = ?`, model.OrderFinished)
	if len(finishedAtCrash) == 0 {
		t.Fatal("no order finished before the crash: the failpoint fired elsewhere")
	}

	// A clean worker takes over; midway the receiver is killed, and
	// restarted once a delivery has failed against its closed port.
	t.Logf("crash after %v", time.Since(started))
	s.StartWorker(t)
	testenv.Eventually(t, 60*time.Second, "40 events acknowledged", func() (bool, error) {
		return rcv.ackedCount() >= 40, fmt.Errorf("%d acknowledged", rcv.ackedCount())
	})
	rcv.kill()
	testenv.Eventually(t, 30*time.Second, "a delivery refused by the killed receiver", func() (bool, error) {
		n := s.Count(t, `SELECT COUNT(*) FROM webhooks WHERE last_error LIKE '%refused%'`)
		return n > 0, fmt.Errorf("%d webhooks failed to connect", n)
	})
	rcv.restart()
	t.Logf("receiver restarted after %v", time.Since(started))

	for _, o := range orders[:90] {
		s.WaitStatus(t, o.OrderNo, model.OrderFinished, 60*time.Second)
	}
	t.Logf("orders finished after %v", time.Since(started))
	testenv.Eventually(t, 60*time.Second, "every webhook delivered", func() (bool, error) {
		n := s.Count(t, `SELECT COUNT(*) FROM webhooks WHERE delivered_at IS NULL`)
		return n == 0, fmt.Errorf("%d undelivered", n)
	})

	t.Logf("webhooks delivered after %v", time.Since(started))
	acked, requests, refused, bad := rcv.snapshot()
	if len(bad) > 0 {
		t.Fatalf("%d invalid deliveries, first: %s", len(bad), bad[0])
	}
	if refused != 3 {
		t.Errorf("receiver refused %d deliveries, want its first 3", refused)
	}
	type row struct {
		EventID string
		Type    string
	}
	ledger := testenv.Rows[row](t, s, `SELECT event_id, type FROM webhooks ORDER BY id`)
	if want := 90*2 + 10; len(ledger) != want {
		t.Errorf("the ledger holds %d webhooks, want %d (paid and finished for 90 orders, closed for 10)", len(ledger), want)
	}
	// Every event of every life arrived, under the id the ledger gave it.
	got := map[string]map[string]int{} // order → type → distinct ids
	redelivered := 0
	for _, r := range ledger {
		arrivals := acked[r.EventID]
		if len(arrivals) == 0 {
			t.Errorf("event %s (%s) never acknowledged", r.EventID, r.Type)
			continue
		}
		for _, a := range arrivals[1:] {
			if a.Body != arrivals[0].Body {
				t.Errorf("event %s redelivered with a different body:\n%s\n%s", r.EventID, arrivals[0].Body, a.Body)
			}
		}
		redelivered += len(arrivals) - 1
		a := arrivals[0]
		if a.Type != r.Type {
			t.Errorf("event %s arrived as %s, the ledger says %s", r.EventID, a.Type, r.Type)
		}
		if got[a.OrderNo] == nil {
			got[a.OrderNo] = map[string]int{}
		}
		got[a.OrderNo][a.Type]++
	}
	for i, o := range orders {
		want := map[string]int{"order.paid": 1, "order.finished": 1}
		if i >= 90 {
			want = map[string]int{"order.closed": 1}
		}
		if fmt.Sprint(got[o.OrderNo]) != fmt.Sprint(want) {
			t.Errorf("order %s: events %v, want %v", o.OrderNo, got[o.OrderNo], want)
		}
	}
	sort.Strings(finishedAtCrash)
	for _, no := range finishedAtCrash {
		if got[no]["order.finished"] != 1 {
			t.Errorf("order %s finished as the worker was killed; its order.finished did not arrive", no)
		}
	}
	checkOperatorViews(t, s, ledger[0].EventID, len(ledger))
	t.Logf("%d events, %d requests (%d refused, %d redeliveries acknowledged); %d orders finished when the worker was killed",
		len(ledger), requests, refused, redelivered, len(finishedAtCrash))
}

// checkOperatorViews: the operator's list shows every delivered webhook
// with its fields, and a retry answers 409 for a delivered one, 404 for an
// unknown id; a bad filter is a 400 that changes nothing.
func checkOperatorViews(t *testing.T, s *testenv.Stack, deliveredID string, total int) {
	t.Helper()
	var list struct {
		Webhooks []struct {
			ID            string     `json:"id"`
			Type          string     `json:"type"`
			Status        string     `json:"status"`
			Attempts      int        `json:"attempts"`
			DeliveredAt   *time.Time `json:"delivered_at"`
			NextAttemptAt *time.Time `json:"next_attempt_at"`
		} `json:"webhooks"`
	}
	if st := s.Admin.Do(t, "GET", "/api/v1/admin/webhooks?status=delivered&limit=1000", nil, &list); st != 200 {
		t.Fatalf("list delivered webhooks: status %d", st)
	}
	if len(list.Webhooks) != total {
		t.Errorf("%d delivered webhooks listed, want %d", len(list.Webhooks), total)
	}
	for _, w := range list.Webhooks {
		if w.Status != "delivered" || w.DeliveredAt == nil || w.Attempts < 1 || w.NextAttemptAt != nil {
			t.Errorf("listed webhook %+v: want delivered, a delivery time, ≥1 attempt, no next attempt", w)
			break
		}
	}
	var failing struct{ Webhooks []any }
	if st := s.Admin.Do(t, "GET", "/api/v1/admin/webhooks?status=failing", nil, &failing); st != 200 || len(failing.Webhooks) != 0 {
		t.Errorf("failing webhooks: status %d, %d listed, want 200 and none", st, len(failing.Webhooks))
	}
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{"POST", "/api/v1/admin/webhooks/" + deliveredID + "/retry", 409},
		{"POST", "/api/v1/admin/webhooks/evt_nosuchevent/retry", 404},
		{"GET", "/api/v1/admin/webhooks?status=lost", 400},
		{"GET", "/api/v1/admin/webhooks?limit=0", 400},
		{"GET", "/api/v1/admin/webhooks?limit=many", 400},
	} {
		var body struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if st := s.Admin.Do(t, c.method, c.path, nil, &body); st != c.want || body.Error.Code == "" {
			t.Errorf("%s %s: status %d (error %q), want %d with an error code", c.method, c.path, st, body.Error.Code, c.want)
		}
	}
}
