package groupbuys

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"orderflow/internal/infra/sign"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"
)

// receipt is one POST the webhook received.
type receipt struct {
	at     time.Time
	status int // what the webhook answered
	id     string
	body   []byte
	sigOK  bool
}

// webhook is the owner/admin notification receiver, on a real local port.
// It answers 500 for failFor after its first request, then 200, each after
// delay.
type webhook struct {
	URL     string
	secret  string
	failFor time.Duration
	delay   time.Duration

	mu    sync.Mutex
	first time.Time
	got   []receipt
}

func newWebhook(t *testing.T, secret string, failFor, delay time.Duration) *webhook {
	t.Helper()
	h := &webhook{secret: secret, failFor: failFor, delay: delay}
	srv := httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(srv.Close)
	h.URL = srv.URL
	return h
}

func (h *webhook) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var m struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &m)
	now := time.Now()
	h.mu.Lock()
	if h.first.IsZero() {
		h.first = now
	}
	status := http.StatusOK
	if now.Sub(h.first) < h.failFor {
		status = http.StatusInternalServerError
	}
	h.got = append(h.got, receipt{at: now, status: status, id: m.ID, body: body,
		sigOK: r.Method == http.MethodPost && sign.Valid(h.secret, body, r.Header.Get(sign.Header))})
	h.mu.Unlock()
	time.Sleep(h.delay)
	w.WriteHeader(status)
}

func (h *webhook) receipts() []receipt {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}

// waitAllDelivered polls the ledger until every notification is acknowledged
// and there are want of them.
func waitAllDelivered(t *testing.T, s *testenv.Stack, want int64, within time.Duration) {
	t.Helper()
	testenv.Eventually(t, within, "every notification delivered", func() (bool, error) {
		total := s.Count(t, `SELECT COUNT(*) FROM notifications`)
		pending, err := s.SC.Store.CountUndelivered(context.Background())
		return total == want && pending == 0, err
	})
}

// checkAckedOnce asserts each notification was acknowledged (answered 2xx)
// exactly once and never received again after that; it returns how many
// failed receipts each id had before its acknowledgement.
func checkAckedOnce(t *testing.T, got []receipt, ids []string) map[string]int {
	t.Helper()
	failures := map[string]int{}
	for _, id := range ids {
		acked := false
		for _, r := range got {
			if r.id != id {
				continue
			}
			switch {
			case acked:
				t.Errorf("notification %s received again at %s after it was acknowledged (answered %d)", id, r.at.Format("15:04:05.000"), r.status)
			case r.status/100 == 2:
				acked = true
			default:
				failures[id]++
			}
		}
		if !acked {
			t.Errorf("notification %s never acknowledged", id)
		}
	}
	return failures
}

// TestWebhookDownThenBackEachNotificationDeliveredOnce is done-when 5: the
// webhook answers 500 for its first rounds, then 200. Every notification is
// delivered once it is back, each acknowledged exactly once under its stable
// id, signed, with the SPEC's body fields; the ledger records the attempts.
func TestWebhookDownThenBackEachNotificationDeliveredOnce(t *testing.T) {
	t.Parallel()
	cfg := testenv.Config(t)
	hook := newWebhook(t, cfg.PaySecret, 2500*time.Millisecond, 0)
	cfg.NotifyURL = hook.URL
	cfg.NotifyInterval = svc.Duration(200 * time.Millisecond)
	s := testenv.StartWith(t, cfg, testenv.Options{})

	// Two groups with a member short of balance: each FAILED at once with
	// an owner and an admin notification.
	g1 := newGroup(t, s, 500, 2*time.Second, 1000, 100)
	g2 := newGroup(t, s, 500, 2*time.Second, 499)
	g1.waitStatus(t, model.GroupFailed, 15*time.Second)
	g2.waitStatus(t, model.GroupFailed, 15*time.Second)
	waitAllDelivered(t, s, 4, 20*time.Second)
	time.Sleep(time.Second) // five more rounds: nothing may be sent again

	rows := testenv.Rows[model.Notification](t, s, `SELECT * FROM notifications ORDER BY id`)
	byID := map[string]model.Notification{}
	var ids []string
	for _, n := range rows {
		byID[n.NotifyID] = n
		ids = append(ids, n.NotifyID)
	}
	got := hook.receipts()
	failures := checkAckedOnce(t, got, ids)
	refused := 0
	for _, r := range got {
		if r.status != http.StatusOK {
			refused++
		}
		if !r.sigOK {
			t.Errorf("receipt for %s: X-Signature missing or wrong", r.id)
		}
		n, ok := byID[r.id]
		if !ok {
			t.Errorf("received an id the ledger does not know: %q (body %s)", r.id, r.body)
			continue
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(r.body, &fields); err != nil {
			t.Errorf("receipt body %q: %v", r.body, err)
			continue
		}
		if k := slices.Sorted(maps.Keys(fields)); !slices.Equal(k, []string{"created_at", "id", "kind", "message", "recipient", "subject"}) {
			t.Errorf("body fields %v, want {id, kind, subject, recipient, message, created_at}", k)
		}
		var b struct {
			Kind, Subject, Recipient, Message string
			CreatedAt                         time.Time `json:"created_at"`
		}
		_ = json.Unmarshal(r.body, &b)
		if b.Kind != n.Kind || b.Subject != n.Subject || b.Recipient != n.Recipient || b.Message != n.Message || !b.CreatedAt.Equal(n.CreatedAt) {
			t.Errorf("body %s does not match the ledger's notification %+v", r.body, n)
		}
	}
	for _, id := range ids {
		n := byID[id]
		if failures[id] == 0 {
			t.Errorf("notification %s was never refused: the outage did not cover it", id)
		}
		if n.DeliveredAt == nil || n.Attempts != failures[id]+1 {
			t.Errorf("notification %s: delivered_at %v, attempts %d; want delivered after %d attempts", id, n.DeliveredAt, n.Attempts, failures[id]+1)
		}
		if n.Kind != "group_failed" || !strings.HasPrefix(n.NotifyID, "group-failed:") {
			t.Errorf("unexpected notification %+v", n)
		}
	}
	t.Logf("%d notifications, %d refused receipts before the webhook came back, %d receipts in all", len(ids), refused, len(got))
}

// TestSlowWebhookNotificationNotSentTwice: the webhook is healthy but slower
// than the notification interval, so one notify:deliver round is still
// posting when the next starts (a fleet of workers, or one worker's
// concurrency, runs them side by side). An acknowledged notification must
// still not be sent again ("nothing is re-sent once acknowledged"; each
// delivered exactly once).
func TestSlowWebhookNotificationNotSentTwice(t *testing.T) {
	t.Parallel()
	cfg := testenv.Config(t)
	hook := newWebhook(t, cfg.PaySecret, 0, 300*time.Millisecond)
	cfg.NotifyURL = hook.URL
	cfg.NotifyInterval = svc.Duration(200 * time.Millisecond)
	s := testenv.StartWith(t, cfg, testenv.Options{})

	g1 := newGroup(t, s, 500, 2*time.Second, 100)
	g2 := newGroup(t, s, 500, 2*time.Second, 100)
	g1.waitStatus(t, model.GroupFailed, 15*time.Second)
	g2.waitStatus(t, model.GroupFailed, 15*time.Second)
	waitAllDelivered(t, s, 4, 20*time.Second)
	time.Sleep(time.Second)

	ids := testenv.Rows[string](t, s, `SELECT notify_id FROM notifications ORDER BY id`)
	got := hook.receipts()
	checkAckedOnce(t, got, ids)
	t.Logf("%d notifications, %d receipts", len(ids), len(got))
}
