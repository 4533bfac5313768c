package paysim

import (
	"errors"
	"net/http"
	"time"
)

// The admin routes of the statement knobs, so a harness that runs the
// simulator as its own process (make chaos, make bench) drives them too:
//
//	GET  /admin/clock                                → {"now"}
//	POST /admin/clock {"at"} | {"offset_ms"} | {}    → {"now"}  fixed time | real time shifted | real time
//	POST /admin/statements/drop {"ref"}
//	POST /admin/statements/alter {"ref","amount_cents"}
//	POST /admin/statements/synthesize {"date","n","prefix"}
//	POST /admin/dashboard-refunds {"order_no","amount_cents"} → {"ref"}
//	POST /admin/pay-unseen {"order_no","amount_cents"}        → {"trade_no"}
func (s *Sim) statementAdminRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /admin/clock", s.handleGetClock)
	mux.HandleFunc("POST /admin/clock", adminRoute(s.setClock))
	mux.HandleFunc("POST /admin/statements/drop", adminRoute(s.statementDrop))
	mux.HandleFunc("POST /admin/statements/alter", adminRoute(s.statementAlter))
	mux.HandleFunc("POST /admin/statements/synthesize", adminRoute(s.synthesize))
	mux.HandleFunc("POST /admin/dashboard-refunds", adminRoute(s.dashboardRefund))
	mux.HandleFunc("POST /admin/pay-unseen", adminRoute(s.payUnseen))
}

// adminRoute serves an admin route: the JSON body decoded into an In, then
// 200 with what do returns, or do's error as writeAdminError maps it.
func adminRoute[In, Out any](do func(In) (Out, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in In
		if !readJSON(w, r, &in) {
			return
		}
		out, err := do(in)
		if err != nil {
			writeAdminError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
	}
}

// writeAdminError maps an admin route's error: a payment that is not
// there, a refund larger than its trade, anything else a bad request.
func writeAdminError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrNoPayment):
		writeError(w, http.StatusNotFound, "not_found", err.Error())
	case errors.Is(err, ErrRefundExceedsTrade):
		writeError(w, http.StatusConflict, "refund_exceeds_trade", err.Error())
	default:
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
	}
}

// clockWire is the body of POST /admin/clock: At fixes the clock, OffsetMS
// shifts the real time, neither restores the real time.
type clockWire struct {
	At       *time.Time `json:"at,omitempty"`
	OffsetMS int64      `json:"offset_ms,omitempty"`
}

// clockAnswer is the answer of both clock routes.
type clockAnswer struct {
	Now time.Time `json:"now"`
}

func (s *Sim) handleGetClock(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, clockAnswer{Now: s.Now()})
}

func (s *Sim) setClock(in clockWire) (clockAnswer, error) {
	switch {
	case in.At != nil:
		at := *in.At
		s.SetClock(func() time.Time { return at })
	case in.OffsetMS != 0:
		off := time.Duration(in.OffsetMS) * time.Millisecond
		s.SetClock(func() time.Time { return time.Now().Add(off) })
	default:
		s.SetClock(nil)
	}
	return clockAnswer{Now: s.Now()}, nil
}

// refWire is the body of the drop and alter routes.
type refWire struct {
	Ref         string `json:"ref"`
	AmountCents int64  `json:"amount_cents,omitempty"`
}

func (s *Sim) statementDrop(in refWire) (refWire, error) {
	if in.Ref == "" {
		return in, errors.New("ref is required")
	}
	s.StatementDrop(in.Ref)
	return in, nil
}

func (s *Sim) statementAlter(in refWire) (refWire, error) {
	if in.Ref == "" || in.AmountCents <= 0 {
		return in, errors.New("ref and a positive amount_cents are required")
	}
	s.StatementAlter(in.Ref, in.AmountCents)
	return in, nil
}

// synthesizeWire is the body of POST /admin/statements/synthesize.
type synthesizeWire struct {
	Date   string `json:"date"`
	N      int    `json:"n"`
	Prefix string `json:"prefix"`
}

func (s *Sim) synthesize(in synthesizeWire) (synthesizeWire, error) {
	return in, s.Synthesize(in.Date, in.N, in.Prefix)
}

// offstageWire is the body of the dashboard-refund and pay-unseen routes.
type offstageWire struct {
	OrderNo     string `json:"order_no"`
	AmountCents int64  `json:"amount_cents"`
}

// offstageAnswer is their answer: Ref for a dashboard refund, TradeNo for
// an unseen payment.
type offstageAnswer struct {
	Ref     string `json:"ref,omitempty"`
	TradeNo string `json:"trade_no,omitempty"`
}

func (s *Sim) dashboardRefund(in offstageWire) (offstageAnswer, error) {
	ref, err := s.DashboardRefund(in.OrderNo, in.AmountCents)
	return offstageAnswer{Ref: ref}, err
}

func (s *Sim) payUnseen(in offstageWire) (offstageAnswer, error) {
	tradeNo, err := s.PayUnseen(in.OrderNo, in.AmountCents)
	return offstageAnswer{TradeNo: tradeNo}, err
}
