package paysim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

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
	OrderNo     string    `json:"order_no"`
	TradeNo     string    `json:"trade_no"`
	AmountCents int64     `json:"amount_cents"`
	PaidAt      time.Time `json:"paid_at,omitzero"` // the simulator's time of the payment, UTC, whole seconds
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
	res, status, code, err := s.pay(r.Context(), req)
	if err != nil {
		writeError(w, status, code, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// handleCheckout is the pay URL orderflow's checkout hands the buyer for the
// simulator: visiting it pays the order (amount_cents as given) at once.
func (s *Sim) handleCheckout(w http.ResponseWriter, r *http.Request) {
	amount, _ := strconv.ParseInt(r.URL.Query().Get("amount_cents"), 10, 64)
	res, status, code, err := s.pay(r.Context(), PayRequest{OrderNo: r.PathValue("order_no"), AmountCents: amount})
	if err != nil {
		writeError(w, status, code, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// pay makes one payment and sends its notification req.Times times: the
// answers, or the status, code and error to refuse with.
func (s *Sim) pay(ctx context.Context, req PayRequest) (PayResult, int, string, error) {
	switch {
	case req.OrderNo == "":
		return PayResult{}, http.StatusBadRequest, "bad_request", errors.New("order_no is required")
	case req.Times < 0 || req.Times > maxPayTimes:
		return PayResult{}, http.StatusBadRequest, "bad_request", errors.New("times must be between 0 and 100 (0 means once)")
	case s.notifyURL == "":
		return PayResult{}, http.StatusBadGateway, "notify_url_missing", errors.New("the simulator has no orderflow URL configured")
	}
	if req.TradeNo == "" {
		req.TradeNo = newTradeNo()
	}
	times := max(req.Times, 1)

	// One body for every copy, so duplicates are byte-identical like a
	// provider's redelivery.
	n := s.recordPayment(req.OrderNo, req.TradeNo, req.AmountCents)
	body, err := json.Marshal(n)
	if err != nil {
		return PayResult{}, http.StatusInternalServerError, "internal", fmt.Errorf("encode notification: %w", err)
	}
	outcomes := s.notifyPayment(ctx, body, times)

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
		return PayResult{}, http.StatusBadGateway, "orderflow_unreachable", firstErr
	}
	log.Info("paysim: payment notified", zap.Ints("status_codes", res.StatusCodes))
	return res, http.StatusOK, "", nil
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
