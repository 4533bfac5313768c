package webhook_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"orderflow/internal/domain/webhook"
	outbound "orderflow/internal/infra/post"
	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// receiver is a real HTTP server answering every post with its status.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	status int
	posts  []post
}

type post struct {
	Signature string
	Body      string
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{status: http.StatusNoContent}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.posts = append(r.posts, post{req.Header.Get(webhook.SignatureHeader), string(body)})
		status := r.status
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) answer(status int) {
	r.mu.Lock()
	r.status = status
	r.mu.Unlock()
}

func (r *receiver) received() []post {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]post(nil), r.posts...)
}

// ledger is a fresh migrated database, the service on it posting to a
// receiver, and a fake clock.
type ledger struct {
	testenv.Base
	svc  *webhook.Service
	recv *receiver
}

const secret = "whsec-test"

func newLedger(t *testing.T) *ledger {
	t.Helper()
	l := &ledger{Base: testenv.NewBase(t, time.Now()), recv: newReceiver(t)}
	l.svc = &webhook.Service{Store: l.Store, URL: l.recv.URL, Secret: secret, Post: outbound.With(&http.Client{Timeout: 5 * time.Second}), PostTimeout: 5 * time.Second,
		Clock: l.Clock, Log: zap.NewNop()}
	return l
}

// event writes an undelivered webhook row, as a move would have.
func (l *ledger) event(t *testing.T, id string, leaseUntil *time.Time) {
	t.Helper()
	now := l.Clock.Now()
	if err := l.DB.Exec(`INSERT INTO webhooks (event_id, type, body, next_attempt_at, created_at, lease_until) VALUES (?, ?, ?, ?, ?, ?)`,
		id, "order.paid", `{"id":"`+id+`","type":"order.paid"}`, now, now, leaseUntil).Error; err != nil {
		t.Fatal(err)
	}
}

// row is what a delivery leaves in the webhook's row.
type row struct {
	Attempts    int
	LastError   string
	NextAttempt time.Time
	Delivered   bool
	Leased      bool
}

func (l *ledger) row(t *testing.T, id string) row {
	t.Helper()
	w, err := l.Store.WebhookByEventID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return row{w.Attempts, w.LastError, w.NextAttemptAt.UTC(), w.DeliveredAt != nil, w.LeaseUntil != nil}
}

// A delivery until the receiver says 2xx: each failure counts an attempt,
// keeps its error and the next try's time (the task's retry schedule) and
// drops the lease; a 2xx is delivered, and a delivered webhook is never
// posted again. Every post carries a signature over its exact body that
// verifies at the time it was sent.
func TestDeliverUntilAcknowledged(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	ctx := context.Background()
	l.event(t, "evt_a", nil)
	start := l.Clock.Now()
	cases := []struct {
		name    string
		status  int
		retryIn time.Duration
		err     bool
		want    row
		posts   int
	}{
		{"500: failing, retry due after the task's backoff", http.StatusInternalServerError, 10 * time.Second, true,
			row{1, "receiver answered 500", start.Add(10 * time.Second), false, false}, 1},
		{"3xx is not delivered", http.StatusNotModified, 40 * time.Second, true,
			row{2, "receiver answered 304", start.Add(time.Minute + 40*time.Second), false, false}, 2},
		{"400: still failing", http.StatusBadRequest, 90 * time.Second, true,
			row{3, "receiver answered 400", start.Add(2*time.Minute + 90*time.Second), false, false}, 3},
		{"202: delivered, the error cleared", http.StatusAccepted, time.Hour, false,
			row{4, "", start.Add(2*time.Minute + 90*time.Second), true, false}, 4},
		{"delivered: not posted again", http.StatusInternalServerError, time.Hour, false,
			row{4, "", start.Add(2*time.Minute + 90*time.Second), true, false}, 4},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l.Clock.Set(start.Add(time.Duration(i) * time.Minute))
			l.recv.answer(tc.status)
			err := l.svc.Deliver(ctx, "evt_a", tc.retryIn)
			if (err != nil) != tc.err {
				t.Fatalf("Deliver = %v, want an error: %v", err, tc.err)
			}
			if diff := cmp.Diff(tc.want, l.row(t, "evt_a")); diff != "" {
				t.Errorf("row (-want +got):\n%s", diff)
			}
			posts := l.recv.received()
			if len(posts) != tc.posts {
				t.Fatalf("%d posts, want %d", len(posts), tc.posts)
			}
			if i > 0 && tc.posts == cases[i-1].posts {
				return // nothing posted: nothing signed now
			}
			last := posts[len(posts)-1]
			if err := webhook.Verify(secret, last.Signature, []byte(last.Body), l.Clock.Now(), time.Second); err != nil {
				t.Errorf("the post's signature: %v", err)
			}
		})
	}
}

// A webhook another delivery holds is not posted (two posts of one event
// never overlap) until its lease runs out; an unknown event is not found;
// with webhooks off nothing is posted and the row waits.
func TestDeliverRefuses(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	ctx := context.Background()
	held := l.Clock.Now().Add(time.Minute)
	l.event(t, "evt_held", &held)
	l.event(t, "evt_off", nil)

	if err := l.svc.Deliver(ctx, "evt_held", time.Second); !errors.Is(err, webhook.ErrLeased) {
		t.Errorf("Deliver of a leased webhook = %v, want ErrLeased", err)
	}
	if err := l.svc.Deliver(ctx, "evt_none", time.Second); !errors.Is(err, webhook.ErrNotFound) {
		t.Errorf("Deliver of an unknown event = %v, want ErrNotFound", err)
	}
	off := *l.svc
	off.URL = ""
	if err := off.Deliver(ctx, "evt_off", time.Second); err != nil {
		t.Errorf("Deliver with webhooks off = %v, want nil", err)
	}
	if n := len(l.recv.received()); n != 0 {
		t.Fatalf("%d posts, want none", n)
	}
	if diff := cmp.Diff(row{NextAttempt: l.Clock.Now()}, l.row(t, "evt_off")); diff != "" {
		t.Errorf("row with webhooks off (-want +got):\n%s", diff)
	}

	l.Clock.Set(held.Add(time.Millisecond)) // the holder died: its lease ran out
	if err := l.svc.Deliver(ctx, "evt_held", time.Second); err != nil {
		t.Fatalf("Deliver after the lease ran out = %v", err)
	}
	if got := l.row(t, "evt_held"); !got.Delivered || got.Leased {
		t.Errorf("after the lease ran out: %+v, want delivered and unleased", got)
	}
}

// The operator's list takes only the statuses a webhook can have.
func TestListRefusesAnUnknownStatus(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	if _, err := l.svc.List(context.Background(), "lost", 10); !errors.Is(err, webhook.ErrBadStatus) {
		t.Errorf("List(lost) = %v, want ErrBadStatus", err)
	}
	for _, s := range []string{"", model.WebhookPending, model.WebhookFailing, model.WebhookDelivered} {
		if _, err := l.svc.List(context.Background(), s, 10); err != nil {
			t.Errorf("List(%q) = %v", s, err)
		}
	}
}
