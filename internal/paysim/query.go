package paysim

import (
	"net/http"
	"time"
)

// PaymentStatus is the answer to GET /payments/{order_no}: the payment the
// simulator made for an order (the latest when it made several).
type PaymentStatus struct {
	OrderNo     string    `json:"order_no"`
	TradeNo     string    `json:"trade_no"`
	AmountCents int64     `json:"amount_cents"`
	Status      string    `json:"status"`           // succeeded
	PaidAt      time.Time `json:"paid_at,omitzero"` // the simulator's time of the payment
}

// trade is one payment the simulator took.
type trade struct {
	orderNo     string
	amountCents int64
	paidAt      time.Time
	// dashboardCents is what refunds made in the dashboard returned
	// (DashboardRefund); orderflow's refunds are counted from s.refunds.
	dashboardCents int64
}

// recordPayment remembers a payment the simulator made, for the query and
// the statement, and returns the notification that tells orderflow. A trade
// number already known is the same payment again (a replayed notification):
// it keeps its first time and statement line.
func (s *Sim) recordPayment(orderNo, tradeNo string, amountCents int64) notification {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := notification{OrderNo: orderNo, TradeNo: tradeNo, AmountCents: amountCents}
	if t, known := s.trades[tradeNo]; known {
		n.PaidAt = t.paidAt
		t.orderNo, t.amountCents = orderNo, amountCents
	} else {
		n.PaidAt = s.nowLocked()
		s.trades[tradeNo] = &trade{orderNo: orderNo, amountCents: amountCents, paidAt: n.PaidAt}
		s.book.add(StatementLine{
			Kind: KindPayment, TradeNo: tradeNo, OrderNo: orderNo, Ref: tradeNo,
			AmountCents: amountCents, FeeCents: feeCents(amountCents), At: n.PaidAt,
		})
	}
	s.payments[orderNo] = n
	return n
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
	writeJSON(w, http.StatusOK, PaymentStatus{
		OrderNo: n.OrderNo, TradeNo: n.TradeNo, AmountCents: n.AmountCents, Status: "succeeded", PaidAt: n.PaidAt,
	})
}
