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
	mux.HandleFunc("POST /admin/clock", s.handleSetClock)
	mux.HandleFunc("POST /admin/statements/drop", s.handleStatementDrop)
	mux.HandleFunc("POST /admin/statements/alter", s.handleStatementAlter)
	mux.HandleFunc("POST /admin/statements/synthesize", s.handleSynthesize)
	mux.HandleFunc("POST /admin/dashboard-refunds", s.handleDashboardRefund)
	mux.HandleFunc("POST /admin/pay-unseen", s.handlePayUnseen)
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

func (s *Sim) handleSetClock(w http.ResponseWriter, r *http.Request) {
	var in clockWire
	if !readJSON(w, r, &in) {
		return
	}
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
	writeJSON(w, http.StatusOK, clockAnswer{Now: s.Now()})
}

// refWire is the body of the drop and alter routes.
type refWire struct {
	Ref         string `json:"ref"`
	AmountCents int64  `json:"amount_cents,omitempty"`
}

func (s *Sim) handleStatementDrop(w http.ResponseWriter, r *http.Request) {
	var in refWire
	if !readJSON(w, r, &in) {
		return
	}
	if in.Ref == "" {
		writeError(w, http.StatusBadRequest, "bad_request", "ref is required")
		return
	}
	s.StatementDrop(in.Ref)
	writeJSON(w, http.StatusOK, in)
}

func (s *Sim) handleStatementAlter(w http.ResponseWriter, r *http.Request) {
	var in refWire
	if !readJSON(w, r, &in) {
		return
	}
	if in.Ref == "" || in.AmountCents <= 0 {
		writeError(w, http.StatusBadRequest, "bad_request", "ref and a positive amount_cents are required")
		return
	}
	s.StatementAlter(in.Ref, in.AmountCents)
	writeJSON(w, http.StatusOK, in)
}

// synthesizeWire is the body of POST /admin/statements/synthesize.
type synthesizeWire struct {
	Date   string `json:"date"`
	N      int    `json:"n"`
	Prefix string `json:"prefix"`
}

func (s *Sim) handleSynthesize(w http.ResponseWriter, r *http.Request) {
	var in synthesizeWire
	if !readJSON(w, r, &in) {
		return
	}
	if err := s.Synthesize(in.Date, in.N, in.Prefix); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, in)
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

func (s *Sim) handleDashboardRefund(w http.ResponseWriter, r *http.Request) {
	var in offstageWire
	if !readJSON(w, r, &in) {
		return
	}
	ref, err := s.DashboardRefund(in.OrderNo, in.AmountCents)
	if err != nil {
		writeOffstageError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, offstageAnswer{Ref: ref})
}

func (s *Sim) handlePayUnseen(w http.ResponseWriter, r *http.Request) {
	var in offstageWire
	if !readJSON(w, r, &in) {
		return
	}
	tradeNo, err := s.PayUnseen(in.OrderNo, in.AmountCents)
	if err != nil {
		writeOffstageError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, offstageAnswer{TradeNo: tradeNo})
}

// writeOffstageError maps DashboardRefund's and PayUnseen's errors.
func writeOffstageError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrNoPayment):
		writeError(w, http.StatusNotFound, "not_found", err.Error())
	case errors.Is(err, ErrRefundExceedsTrade):
		writeError(w, http.StatusConflict, "refund_exceeds_trade", err.Error())
	default:
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
	}
}
