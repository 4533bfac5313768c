package webhooks

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"
)

// holdingReceiver answers nothing until released: it counts the posts of
// each event in flight at once, and tells the test when the first arrives.
type holdingReceiver struct {
	url     string
	arrived chan struct{} // closed by the first post
	release chan struct{} // closed by the test: every post is answered 204

	mu       sync.Mutex
	inFlight map[string]int
	maxAtOne map[string]int
	posts    map[string]int
	once     sync.Once
}

func newHoldingReceiver(t *testing.T) *holdingReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &holdingReceiver{url: "http://" + ln.Addr().String() + "/hooks", arrived: make(chan struct{}), release: make(chan struct{}),
		inFlight: map[string]int{}, maxAtOne: map[string]int{}, posts: map[string]int{}}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return h
}

func (h *holdingReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var msg struct {
		ID string `json:"id"`
	}
	body, _ := io.ReadAll(req.Body)
	_ = json.Unmarshal(body, &msg)
	h.mu.Lock()
	h.posts[msg.ID]++
	h.inFlight[msg.ID]++
	h.maxAtOne[msg.ID] = max(h.maxAtOne[msg.ID], h.inFlight[msg.ID])
	h.mu.Unlock()
	h.once.Do(func() { close(h.arrived) })
	defer func() {
		h.mu.Lock()
		h.inFlight[msg.ID]--
		h.mu.Unlock()
	}()
	select {
	case <-h.release:
		w.WriteHeader(http.StatusNoContent)
	case <-req.Context().Done(): // the sender gave up: no longer in flight
	}
}

// counts returns how many posts of id arrived and the most at once.
func (h *holdingReceiver) counts(id string) (posts, atOnce int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.posts[id], h.maxAtOne[id]
}

// An operator retries a webhook while its post is in flight (the receiver
// is slow to answer). The retry's new task generation must wait for that
// post's lease, not post the same event beside it: docs/webhooks.md
// promises one post of an event at a time.
func TestRetryDuringAPostDoesNotPostTwiceAtOnce(t *testing.T) {
	t.Parallel()
	const secret = "test-webhook-secret"
	rcv := newHoldingReceiver(t)
	s := testenv.Start(t, testenv.Options{Configure: func(c *svc.Config) {
		c.WebhookURL, c.WebhookSecret = rcv.url, secret
		c.WebhookRetryDelay = svc.Duration(50 * time.Millisecond)
	}})
	_, buyer, o := s.NewCardOrder(t, "wh-overlap", 300, 1)
	buyer.Cancel(t, o.OrderNo)
	select { // order.closed's first post, held by the receiver
	case <-rcv.arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("order.closed was never posted")
	}
	eventID := testenv.Rows[string](t, s, `SELECT event_id FROM webhooks WHERE type = 'order.closed'`)[0]

	if st := s.Admin.Do(t, "POST", "/api/v1/admin/webhooks/"+eventID+"/retry", nil, nil); st != 200 {
		t.Fatalf("operator retry of %s: status %d", eventID, st)
	}
	// The retry's task (generation 1) runs at once: it either posts beside
	// the held post (the defect) or is refused the lease and waits.
	gen1 := tasks.ID(tasks.TypeWebhookDeliver, eventID, 1)
	testenv.Eventually(t, 30*time.Second, "the retry's task posts or is refused the lease", func() (bool, error) {
		if _, atOnce := rcv.counts(eventID); atOnce > 1 {
			return true, nil
		}
		info, err := s.SC.Inspector.GetTaskInfo(tasks.QueueDefault, gen1)
		if err != nil {
			return false, err
		}
		return strings.Contains(info.LastErr, "held by another delivery"), fmt.Errorf("task %s %s, last error %q", gen1, info.State, info.LastErr)
	})
	if posts, atOnce := rcv.counts(eventID); atOnce != 1 {
		t.Errorf("%d posts of %s, %d of them at once; want one at a time", posts, eventID, atOnce)
	}

	close(rcv.release)
	testenv.Eventually(t, 30*time.Second, "the event delivered", func() (bool, error) {
		n := s.Count(t, `SELECT COUNT(*) FROM webhooks WHERE event_id = ? AND delivered_at IS NOT NULL`, eventID)
		return n == 1, fmt.Errorf("%s not delivered", eventID)
	})
	if _, atOnce := rcv.counts(eventID); atOnce != 1 {
		t.Errorf("%d posts of %s at once; want one at a time", atOnce, eventID)
	}
	if st := s.OrderRow(t, o.OrderNo).Status; st != model.OrderClosed {
		t.Errorf("order %s is %s, want closed", o.OrderNo, st)
	}
}
