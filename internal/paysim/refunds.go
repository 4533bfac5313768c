package paysim

import (
	"net/http"
	"time"

	"go.uber.org/zap"
)

// Refund statuses of the provider protocol.
const (
	StatusProcessing = "processing"
	StatusSucceeded  = "succeeded"
	StatusFailed     = "failed"
)

// maxOutRequestNo mirrors the length limit real providers put on merchant
// request numbers, so orderflow cannot grow refund_no unnoticed.
const maxOutRequestNo = 64

// RefundRequest is the body of POST /refunds.
type RefundRequest struct {
	OutRequestNo string `json:"out_request_no"`
	TradeNo      string `json:"trade_no"`
	OrderNo      string `json:"order_no"`
	AmountCents  int64  `json:"amount_cents"`
}

// RefundStatus is the answer to POST /refunds and GET /refunds/{out_request_no},
// and the body of the refund callback.
type RefundStatus struct {
	OutRequestNo string `json:"out_request_no"`
	Status       string `json:"status"`
}

// refund is everything the simulator knows about one out_request_no.
type refund struct {
	req RefundRequest
	// status is empty until the refund has been applied; a refund that was
	// only called with injected failures, or only armed to fail, is unknown
	// to the protocol (GET answers 404).
	status   string
	executed int // times money moved; the invariant under test is executed <= 1
	calls    int // POST /refunds calls received, injected failures included
	queries  int // GET /refunds/{out_request_no} calls received
	// failArmed makes the refund fail on arrival (POST /admin/refunds/…/fail
	// before orderflow sent it).
	failArmed bool
}

// fault is what the dice decided for one refund call.
type fault int

const (
	faultNone fault = iota
	faultFail
	faultTimeout
)

// callPlan is the fault decision and timings for one refund call, taken
// under the lock so a knob change mid-call does not tear it.
type callPlan struct {
	fault        fault
	applyFirst   bool // for faultTimeout: apply the refund before hanging
	delay        time.Duration
	timeoutDelay time.Duration
}

// planLocked rolls the dice for one refund call. s.mu must be held.
func (s *Sim) planLocked() callPlan {
	p := callPlan{delay: s.knobs.Delay, timeoutDelay: s.knobs.TimeoutDelay}
	switch u := s.rng.Float64(); {
	case u < s.knobs.FailRate:
		p.fault = faultFail
	case u < s.knobs.FailRate+s.knobs.TimeoutRate:
		p.fault = faultTimeout
		p.applyFirst = s.rng.IntN(2) == 0
	}
	return p
}

// playFaults plays a call's plan before it is answered and reports whether
// the call goes on. The delay first: a caller that gives up during it never
// saw an answer, so nothing is applied, like a provider that dropped the
// request. Then an injected 500, decided before anything is applied (it
// never moved money), or a timeout: beforeHang, then a hang ended by a 504.
func (s *Sim) playFaults(w http.ResponseWriter, r *http.Request, plan callPlan, beforeHang func()) bool {
	if !s.sleep(r.Context(), plan.delay) {
		writeError(w, http.StatusGatewayTimeout, "timeout", "request abandoned during delay")
		return false
	}
	switch plan.fault {
	case faultFail:
		writeError(w, http.StatusInternalServerError, "injected_failure", "simulated provider error")
		return false
	case faultTimeout:
		beforeHang()
		s.hang(w, r, plan.timeoutDelay)
		return false
	}
	return true
}

// refundLocked returns the record for no, creating it. s.mu must be held.
func (s *Sim) refundLocked(no string) *refund {
	r, ok := s.refunds[no]
	if !ok {
		r = &refund{}
		s.refunds[no] = r
	}
	return r
}

// handleCreateRefund serves POST /refunds.
func (s *Sim) handleCreateRefund(w http.ResponseWriter, r *http.Request, body []byte) {
	var req RefundRequest
	if !decodeJSON(w, body, &req) {
		return
	}
	if msg := validateRefund(req); msg != "" {
		writeError(w, http.StatusBadRequest, "bad_request", msg)
		return
	}

	s.mu.Lock()
	s.refundLocked(req.OutRequestNo).calls++
	plan := s.planLocked()
	s.mu.Unlock()

	// A timeout's outcome is unknown: the refund may or may not have been
	// applied before the caller gave up, and only a query can tell.
	if !s.playFaults(w, r, plan, func() {
		if plan.applyFirst {
			s.applyRefund(req)
		}
	}) {
		return
	}

	st, ok := s.applyRefund(req)
	if !ok {
		writeError(w, http.StatusConflict, "out_request_no_conflict",
			"out_request_no "+req.OutRequestNo+" was already used with a different trade, order or amount")
		return
	}
	if st.Status == "" {
		writeError(w, http.StatusBadRequest, "refund_exceeds_trade",
			"the trade's refunds would add up to more than it paid")
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// validateRefund returns why req is unacceptable, or "".
func validateRefund(req RefundRequest) string {
	switch {
	case req.OutRequestNo == "":
		return "out_request_no is required"
	case len(req.OutRequestNo) > maxOutRequestNo:
		return "out_request_no is longer than 64 characters"
	case req.TradeNo == "":
		return "trade_no is required"
	case req.OrderNo == "":
		return "order_no is required"
	case req.AmountCents <= 0:
		return "amount_cents must be positive"
	}
	return ""
}

// applyRefund executes the refund once per out_request_no and returns its
// current status. A repeat returns the stored refund without executing again;
// a repeat with different parameters is refused (ok=false), as a real
// provider refuses to reuse a request number for another refund.
func (s *Sim) applyRefund(req RefundRequest) (st RefundStatus, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.refundLocked(req.OutRequestNo)
	if r.status != "" {
		if r.req != req {
			return RefundStatus{}, false
		}
		return RefundStatus{OutRequestNo: req.OutRequestNo, Status: r.status}, true
	}
	if t, known := s.trades[req.TradeNo]; known && s.refundedLocked(req.TradeNo)+req.AmountCents > t.amountCents {
		// A trade is refunded in parts, never past what it paid: nothing
		// is recorded, so the number stays free (Status "" tells the caller).
		return RefundStatus{OutRequestNo: req.OutRequestNo}, true
	}
	r.req = req
	if r.failArmed {
		// The provider declined it: no money moved.
		r.status = StatusFailed
		s.log.Info("paysim: refund declared failed on arrival", zap.String("out_request_no", req.OutRequestNo))
		return RefundStatus{OutRequestNo: req.OutRequestNo, Status: r.status}, true
	}
	r.executed++
	s.log.Info("paysim: refund executed",
		zap.String("out_request_no", req.OutRequestNo),
		zap.String("order_no", req.OrderNo),
		zap.Int64("amount_cents", req.AmountCents))
	if s.knobs.CallbackDelay == 0 {
		s.succeedLocked(r)
	} else {
		r.status = StatusProcessing
		s.completeLater(req.OutRequestNo, s.knobs.CallbackDelay)
	}
	return RefundStatus{OutRequestNo: req.OutRequestNo, Status: r.status}, true
}

// refundedLocked is what the refunds of trade tradeNo returned or are
// returning (every applied refund but a failed one, and the dashboard's).
// s.mu must be held.
func (s *Sim) refundedLocked(tradeNo string) int64 {
	var sum int64
	if t, known := s.trades[tradeNo]; known {
		sum = t.dashboardCents
	}
	for _, r := range s.refunds {
		if r.status != "" && r.status != StatusFailed && r.req.TradeNo == tradeNo {
			sum += r.req.AmountCents
		}
	}
	return sum
}

// succeedLocked marks an executed refund succeeded: the money is back with
// the buyer, so the refund enters the statement of today. s.mu must be held.
func (s *Sim) succeedLocked(r *refund) {
	r.status = StatusSucceeded
	s.book.add(StatementLine{
		Kind: KindRefund, TradeNo: r.req.TradeNo, OrderNo: r.req.OrderNo,
		RefundNo: r.req.OutRequestNo, Ref: r.req.OutRequestNo,
		AmountCents: r.req.AmountCents, At: s.nowLocked(),
	})
}

// completeLater moves a processing refund to succeeded after d and sends the
// callback, unless the refund was forced to fail meanwhile.
func (s *Sim) completeLater(no string, d time.Duration) {
	s.goBackground(func() {
		if !s.sleep(s.ctx, d) {
			return
		}
		s.mu.Lock()
		r := s.refunds[no]
		moved := r != nil && r.status == StatusProcessing
		if moved {
			s.succeedLocked(r)
		}
		s.mu.Unlock()
		if moved {
			s.sendCallback(RefundStatus{OutRequestNo: no, Status: StatusSucceeded})
		}
	})
}

// handleQueryRefund serves GET /refunds/{out_request_no}.
func (s *Sim) handleQueryRefund(w http.ResponseWriter, r *http.Request, _ []byte) {
	no := r.PathValue("out_request_no")

	s.mu.Lock()
	if rf, ok := s.refunds[no]; ok {
		rf.queries++
	}
	plan := s.planLocked()
	s.mu.Unlock()

	if !s.playFaults(w, r, plan, func() {}) {
		return
	}

	s.mu.Lock()
	status := ""
	if rf, ok := s.refunds[no]; ok {
		status = rf.status
	}
	s.mu.Unlock()
	if status == "" {
		writeError(w, http.StatusNotFound, "refund_not_found", "no refund with out_request_no "+no)
		return
	}
	writeJSON(w, http.StatusOK, RefundStatus{OutRequestNo: no, Status: status})
}

// hang models a provider that stops answering: it holds the call until the
// caller gives up or d passes, then answers 504 (which a caller that already
// gave up never reads).
func (s *Sim) hang(w http.ResponseWriter, r *http.Request, d time.Duration) {
	s.sleep(r.Context(), d)
	writeError(w, http.StatusGatewayTimeout, "timeout", "simulated provider timeout")
}

// TradeRefunded is what the refunds of trade tradeNo returned or are
// returning, in cents.
func (s *Sim) TradeRefunded(tradeNo string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refundedLocked(tradeNo)
}
