package webhooks

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"orderflow/internal/domain/webhook"
)

// receiver is a shop's webhook endpoint the test owns: it verifies every
// signature, refuses its first failFirst deliveries, and can be killed
// (its listener closed) and restarted on the same port.
type receiver struct {
	t         *testing.T
	secret    string
	addr      string
	failFirst int
	forbidden string // a text no body may contain (card codes)

	mu       sync.Mutex
	srv      *http.Server
	requests int
	refused  int
	bad      []string             // why a delivery was not a valid one
	acked    map[string][]arrival // event id → every delivery answered 2xx
}

// arrival is one acknowledged delivery.
type arrival struct {
	Body    string
	Type    string
	OrderNo string
	Status  string
}

func newReceiver(t *testing.T, secret string, failFirst int, forbidden string) *receiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{t: t, secret: secret, addr: ln.Addr().String(), failFirst: failFirst, forbidden: forbidden,
		acked: map[string][]arrival{}}
	r.serve(ln)
	t.Cleanup(r.kill)
	return r
}

func (r *receiver) URL() string { return "http://" + r.addr + "/hooks" }

func (r *receiver) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(r.handle), ReadHeaderTimeout: 5 * time.Second}
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// kill closes the listener and every connection: deliveries now fail to connect.
func (r *receiver) kill() {
	r.mu.Lock()
	srv := r.srv
	r.mu.Unlock()
	_ = srv.Close()
}

// restart listens on the same port again.
func (r *receiver) restart() {
	r.t.Helper()
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		r.t.Fatalf("receiver: listen again on %s: %v", r.addr, err)
	}
	r.serve(ln)
}

func (r *receiver) handle(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	if err != nil {
		r.bad = append(r.bad, "read: "+err.Error())
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if err := webhook.Verify(r.secret, req.Header.Get(webhook.SignatureHeader), body, time.Now(), 5*time.Minute); err != nil {
		r.bad = append(r.bad, err.Error())
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var msg struct {
		ID        string    `json:"id"`
		Type      string    `json:"type"`
		CreatedAt time.Time `json:"created_at"`
		Data      struct {
			OrderNo string `json:"order_no"`
			GroupNo string `json:"group_no"`
			Status  string `json:"status"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg.ID == "" || msg.Type == "" || msg.CreatedAt.IsZero() ||
		msg.Data.Status == "" || (msg.Data.OrderNo == "" && msg.Data.GroupNo == "") {
		r.bad = append(r.bad, "malformed body: "+string(body)+" "+errors.Join(err).Error())
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if r.forbidden != "" && strings.Contains(string(body), r.forbidden) {
		r.bad = append(r.bad, "body carries a card code: "+string(body))
	}
	if r.requests <= r.failFirst {
		r.refused++
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	r.acked[msg.ID] = append(r.acked[msg.ID], arrival{Body: string(body), Type: msg.Type, OrderNo: msg.Data.OrderNo, Status: msg.Data.Status})
	w.WriteHeader(http.StatusNoContent)
}

// snapshot copies what arrived.
func (r *receiver) snapshot() (acked map[string][]arrival, requests, refused int, bad []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	acked = make(map[string][]arrival, len(r.acked))
	for k, v := range r.acked {
		acked[k] = append([]arrival(nil), v...)
	}
	return acked, r.requests, r.refused, append([]string(nil), r.bad...)
}

func (r *receiver) ackedCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.acked)
}
