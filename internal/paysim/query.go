package paysim

import (
	"net/http"
)

// PaymentStatus is the answer to GET /payments/{order_no}: the payment the
// simulator made for an order (the latest when it made several).
type PaymentStatus struct {
	OrderNo     string `json:"order_no"`
	TradeNo     string `json:"trade_no"`
	AmountCents int64  `json:"amount_cents"`
	Status      string `json:"status"` // succeeded
}

// recordPayment remembers a payment the simulator made, for the query.
func (s *Sim) recordPayment(n notification) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.payments == nil {
		s.payments = map[string]notification{}
	}
	s.payments[n.OrderNo] = n
	if s.trades == nil {
		s.trades = map[string]int64{}
	}
	s.trades[n.TradeNo] = n.AmountCents
}

// handleQueryPayment answers orderflow's payment query (the recovery of a
// lost notification): 200 with the payment, or 404 when none was made.
func (s *Sim) handleQueryPayment(w http.ResponseWriter, r *http.Request, _ []byte) {
	orderNo := r.PathValue("order_no")
	s.mu.Lock()
	n, ok := s.payments[orderNo]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "no payment for this order")
		return
	}
	writeJSON(w, http.StatusOK, PaymentStatus{OrderNo: n.OrderNo, TradeNo: n.TradeNo, AmountCents: n.AmountCents, Status: "succeeded"})
}
