package paysim

import (
	"net/http"
	"time"

	"go.uber.org/zap"
)

// Stats is the answer to GET /admin/stats.
type Stats struct {
	// Refunds holds every out_request_no the simulator has seen.
	Refunds map[string]RefundStats `json:"refunds"`
	// MaxExecuted is the highest Executed over all refunds; anything above 1
	// means some refund moved money twice.
	MaxExecuted int `json:"max_executed"`
	// PaymentsSent counts payment notifications POSTed to orderflow
	// (each of a "times": n burst counts).
	PaymentsSent int64 `json:"payments_sent"`
	// CallbacksSent counts refund callbacks orderflow acknowledged with 2xx.
	CallbacksSent int64 `json:"callbacks_sent"`
	// CallbacksFailed counts refund callbacks given up after every attempt.
	CallbacksFailed int64 `json:"callbacks_failed"`
}

// RefundStats describes one out_request_no.
type RefundStats struct {
	// Executed is how many times the refund moved money (must stay <= 1).
	Executed int `json:"executed"`
	// Calls counts POST /refunds calls, injected failures included.
	Calls int `json:"calls"`
	// Queries counts GET /refunds/{out_request_no} calls.
	Queries int `json:"queries"`
	// Status is processing, succeeded or failed; empty if never applied.
	Status string `json:"status"`
}

// Stats returns a snapshot of the simulator's counters.
func (s *Sim) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{
		Refunds:         make(map[string]RefundStats, len(s.refunds)),
		PaymentsSent:    s.paymentsSent,
		CallbacksSent:   s.callbacksSent,
		CallbacksFailed: s.callbacksFailed,
	}
	for no, r := range s.refunds {
		st.Refunds[no] = RefundStats{Executed: r.executed, Calls: r.calls, Queries: r.queries, Status: r.status}
		st.MaxExecuted = max(st.MaxExecuted, r.executed)
	}
	return st
}

func (s *Sim) handleStats(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Stats())
}

// FailResult is the answer to POST /admin/refunds/{out_request_no}/fail.
type FailResult struct {
	OutRequestNo string `json:"out_request_no"`
	Status       string `json:"status"`
	// Armed is true when the refund had not arrived yet: it will be declared
	// failed when orderflow sends it.
	Armed bool `json:"armed"`
}

// FailRefund declares a refund failed, for tests of orderflow's manual path.
// A processing refund fails now and a "failed" callback is sent; a refund not
// seen yet is armed to fail on arrival (needed when CallbackDelay is 0, since
// such refunds succeed in the create answer); a succeeded refund cannot fail
// (ok=false).
func (s *Sim) FailRefund(no string) (res FailResult, ok bool) {
	s.mu.Lock()
	r := s.refundLocked(no)
	res = FailResult{OutRequestNo: no, Status: StatusFailed}
	notify := false
	switch r.status {
	case "":
		r.failArmed = true
		res.Armed = true
	case StatusProcessing:
		r.status = StatusFailed
		notify = true
	case StatusSucceeded:
		s.mu.Unlock()
		return FailResult{OutRequestNo: no, Status: StatusSucceeded}, false
	}
	s.mu.Unlock()

	s.log.Info("paysim: refund forced to fail", zap.String("out_request_no", no), zap.Bool("armed", res.Armed))
	if notify {
		s.sendCallback(RefundStatus{OutRequestNo: no, Status: StatusFailed})
	}
	return res, true
}

func (s *Sim) handleFailRefund(w http.ResponseWriter, r *http.Request) {
	no := r.PathValue("out_request_no")
	if no == "" || len(no) > maxOutRequestNo {
		writeError(w, http.StatusBadRequest, "bad_request", "out_request_no must be 1 to 64 characters")
		return
	}
	res, ok := s.FailRefund(no)
	if !ok {
		writeError(w, http.StatusConflict, "already_succeeded", "refund "+no+" already succeeded")
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// knobsWire is Knobs on the wire (GET and POST /admin/config). Durations are
// milliseconds; on POST an absent field keeps its current value.
type knobsWire struct {
	FailRate        *float64 `json:"fail_rate,omitempty"`
	TimeoutRate     *float64 `json:"timeout_rate,omitempty"`
	DelayMS         *int64   `json:"delay_ms,omitempty"`
	TimeoutDelayMS  *int64   `json:"timeout_delay_ms,omitempty"`
	CallbackDelayMS *int64   `json:"callback_delay_ms,omitempty"`
}

func (k Knobs) wire() knobsWire {
	ms := func(d time.Duration) *int64 { v := d.Milliseconds(); return &v }
	return knobsWire{
		FailRate:        &k.FailRate,
		TimeoutRate:     &k.TimeoutRate,
		DelayMS:         ms(k.Delay),
		TimeoutDelayMS:  ms(k.TimeoutDelay),
		CallbackDelayMS: ms(k.CallbackDelay),
	}
}

// apply returns k with the fields present in w replaced.
func (w knobsWire) apply(k Knobs) Knobs {
	if w.FailRate != nil {
		k.FailRate = *w.FailRate
	}
	if w.TimeoutRate != nil {
		k.TimeoutRate = *w.TimeoutRate
	}
	if w.DelayMS != nil {
		k.Delay = time.Duration(*w.DelayMS) * time.Millisecond
	}
	if w.TimeoutDelayMS != nil {
		k.TimeoutDelay = time.Duration(*w.TimeoutDelayMS) * time.Millisecond
	}
	if w.CallbackDelayMS != nil {
		k.CallbackDelay = time.Duration(*w.CallbackDelayMS) * time.Millisecond
	}
	return k
}

// validate returns why w is unacceptable, or "".
func (w knobsWire) validate() string {
	for _, r := range []*float64{w.FailRate, w.TimeoutRate} {
		if r != nil && !(*r >= 0 && *r <= 1) {
			return "fail_rate and timeout_rate must be between 0 and 1"
		}
	}
	for _, d := range []*int64{w.DelayMS, w.TimeoutDelayMS, w.CallbackDelayMS} {
		if d != nil && *d < 0 {
			return "delays must not be negative"
		}
	}
	return ""
}

func (s *Sim) handleGetKnobs(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Knobs().wire())
}

func (s *Sim) handlePostKnobs(w http.ResponseWriter, r *http.Request) {
	var in knobsWire
	if !readJSON(w, r, &in) {
		return
	}
	if msg := in.validate(); msg != "" {
		writeError(w, http.StatusBadRequest, "bad_request", msg)
		return
	}
	// Read-modify-write under one lock so concurrent partial updates do not
	// undo each other.
	s.mu.Lock()
	s.setKnobsLocked(in.apply(s.knobs))
	k := s.knobs
	s.mu.Unlock()
	s.log.Info("paysim: knobs changed",
		zap.Float64("fail_rate", k.FailRate), zap.Float64("timeout_rate", k.TimeoutRate),
		zap.Duration("delay", k.Delay), zap.Duration("timeout_delay", k.TimeoutDelay),
		zap.Duration("callback_delay", k.CallbackDelay))
	writeJSON(w, http.StatusOK, k.wire())
}
