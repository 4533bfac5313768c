package paysim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"sync"

	"go.uber.org/zap"
)

// paymentNotifyPath is where orderflow receives payment notifications.
const paymentNotifyPath = "/api/v1/payments/notify"

// maxPayTimes bounds a duplicate burst; enough to provoke races, small
// enough not to look like a load test.
const maxPayTimes = 100

// PayRequest is the body of POST /admin/pay. The amount is forwarded as
// given (it may differ from the order's, to test wrong-amount handling).
type PayRequest struct {
	OrderNo     string `json:"order_no"`
	AmountCents int64  `json:"amount_cents"`
	// TradeNo is generated when empty; pass one to replay a payment.
	TradeNo string `json:"trade_no,omitempty"`
	// Times sends the same notification this many times concurrently (default 1).
	Times int `json:"times,omitempty"`
}

// PayResult is the answer to POST /admin/pay.
type PayResult struct {
	TradeNo string `json:"trade_no"`
	// StatusCode and Body are orderflow's answer to the first notification.
	StatusCode int             `json:"status_code"`
	Body       json.RawMessage `json:"body"`
	// StatusCodes holds orderflow's status for every notification sent, in
	// send order; 0 marks one that could not reach orderflow.
	StatusCodes []int `json:"status_codes"`
}

// notification is the signed body POSTed to orderflow.
type notification struct {
	OrderNo     string `json:"order_no"`
	TradeNo     string `json:"trade_no"`
	AmountCents int64  `json:"amount_cents"`
}

// sendOutcome is orderflow's answer to one notification.
type sendOutcome struct {
	code int
	body []byte
	err  error
}

func (s *Sim) handlePay(w http.ResponseWriter, r *http.Request) {
	var req PayRequest
	if !readJSON(w, r, &req) {
		return
	}
	switch {
	case req.OrderNo == "":
		writeError(w, http.StatusBadRequest, "bad_request", "order_no is required")
		return
	case req.Times < 0 || req.Times > maxPayTimes:
		writeError(w, http.StatusBadRequest, "bad_request", "times must be between 0 and 100 (0 means once)")
		return
	case s.notifyURL == "":
		writeError(w, http.StatusBadGateway, "notify_url_missing", "the simulator has no orderflow URL configured")
		return
	}
	if req.TradeNo == "" {
		req.TradeNo = newTradeNo()
	}
	times := max(req.Times, 1)

	// One body for every copy, so duplicates are byte-identical like a
	// provider's redelivery.
	n := notification{OrderNo: req.OrderNo, TradeNo: req.TradeNo, AmountCents: req.AmountCents}
	body, err := json.Marshal(n)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal", "encode notification: "+err.Error())
		return
	}
	s.recordPayment(n)
	outcomes := s.notifyPayment(r.Context(), body, times)

	res := PayResult{TradeNo: req.TradeNo, StatusCodes: make([]int, times)}
	reached := 0
	var firstErr error
	for i, o := range outcomes {
		if o.err != nil {
			if firstErr == nil {
				firstErr = o.err
			}
			continue
		}
		res.StatusCodes[i] = o.code
		if reached == 0 {
			res.StatusCode, res.Body = o.code, asJSON(o.body)
		}
		reached++
	}
	log := s.log.With(zap.String("order_no", req.OrderNo), zap.String("trade_no", req.TradeNo), zap.Int("times", times))
	if reached == 0 {
		log.Warn("paysim: payment notification did not reach orderflow", zap.Error(firstErr))
		writeError(w, http.StatusBadGateway, "orderflow_unreachable", firstErr.Error())
		return
	}
	log.Info("paysim: payment notified", zap.Ints("status_codes", res.StatusCodes))
	writeJSON(w, http.StatusOK, res)
}

// notifyPayment POSTs body to orderflow n times at once and returns each outcome.
func (s *Sim) notifyPayment(ctx context.Context, body []byte, n int) []sendOutcome {
	url := s.notifyURL + paymentNotifyPath
	out := make([]sendOutcome, n)
	var wg sync.WaitGroup
	// A start barrier so the copies hit orderflow as close together as
	// goroutines allow: the point of a burst is the race.
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			s.mu.Lock()
			s.paymentsSent++
			s.mu.Unlock()
			code, resp, err := postSigned(ctx, s.out, s.secret, url, body)
			out[i] = sendOutcome{code: code, body: resp, err: err}
		})
	}
	close(start)
	wg.Wait()
	return out
}

// newTradeNo returns an unguessable provider trade number: "T" + 20 hex digits.
func newTradeNo() string {
	var b [10]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return "T" + hex.EncodeToString(b[:])
}

// asJSON passes orderflow's body through as JSON, quoting it when it is not
// JSON (a proxy's HTML error page, say) so the harness still sees it.
func asJSON(b []byte) json.RawMessage {
	if len(b) > 0 && json.Valid(b) {
		return b
	}
	q, _ := json.Marshal(string(b))
	return q
}
