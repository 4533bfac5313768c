package paysim

import (
	"encoding/json"
	"time"

	"go.uber.org/zap"
)

// Callback delivery: a few attempts with doubling waits, because orderflow
// may be restarting; after that the refund is only learnt by orderflow's
// active query, which is exactly the path the spec wants exercised.
const (
	callbackAttempts  = 5
	callbackFirstWait = 200 * time.Millisecond
)

// refundNotifyPath is where orderflow receives refund callbacks.
const refundNotifyPath = "/api/v1/payments/refund-notify"

// sendCallback delivers a signed refund callback in the background.
func (s *Sim) sendCallback(st RefundStatus) {
	s.goBackground(func() { s.deliverCallback(st) })
}

// deliverCallback POSTs st to orderflow until it answers 2xx or the attempts
// run out.
func (s *Sim) deliverCallback(st RefundStatus) {
	log := s.log.With(zap.String("out_request_no", st.OutRequestNo), zap.String("status", st.Status))
	if s.notifyURL == "" {
		log.Warn("paysim: no notify URL configured; refund callback dropped")
		s.countCallback(false)
		return
	}
	body, err := json.Marshal(st)
	if err != nil {
		log.Error("paysim: encode refund callback", zap.Error(err))
		s.countCallback(false)
		return
	}
	url := s.notifyURL + refundNotifyPath
	wait := callbackFirstWait
	for attempt := 1; attempt <= callbackAttempts; attempt++ {
		code, _, err := postSigned(s.ctx, s.out, s.secret, url, body)
		if err == nil && code >= 200 && code < 300 {
			log.Info("paysim: refund callback delivered", zap.Int("attempt", attempt))
			s.countCallback(true)
			return
		}
		log.Warn("paysim: refund callback not acknowledged",
			zap.Int("attempt", attempt), zap.Int("status_code", code), zap.Error(err))
		if attempt == callbackAttempts || !s.sleep(s.ctx, wait) {
			break
		}
		wait *= 2
	}
	log.Warn("paysim: refund callback given up")
	s.countCallback(false)
}

func (s *Sim) countCallback(delivered bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if delivered {
		s.callbacksSent++
	} else {
		s.callbacksFailed++
	}
}
