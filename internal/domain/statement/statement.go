// Package statement reconciles the ledger with every provider's daily
// statement (对账): a run reads one provider's statement of one of its days
// page by page, matches each line with the ledger's payments, refunds and
// disputes, and lists each difference once as a break, doing what the
// system can about it (an unknown payment goes through the one payment
// path; a refund made in the provider's dashboard is recorded against its
// payment) and telling the admin and the shop about every one.
// docs/statements.md is the operator's page.
package statement

import (
	"time"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/domain/order"
	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/pay"
	"orderflow/model"

	"go.uber.org/zap"
)

// Break kinds (SPEC "Provider statements").
const (
	// BreakUnknownPayment is money the provider took that the ledger never
	// recorded: fed to the payment path, resolved once the ledger holds it.
	BreakUnknownPayment = "unknown_payment"
	// BreakMissingPayment is a payment the ledger holds that the
	// statement of its day does not list.
	BreakMissingPayment = "missing_payment"
	// BreakAmountMismatch is a payment or refund both list, with
	// different amounts.
	BreakAmountMismatch = "amount_mismatch"
	// BreakUnknownRefund is money the provider returned that orderflow
	// never asked for (a refund in the provider's dashboard, or a
	// chargeback it was never told of).
	BreakUnknownRefund = "unknown_refund"
	// BreakMissingRefund is a refund the ledger holds as succeeded that the
	// statement of its day does not list.
	BreakMissingRefund = "missing_refund"
)

// BreakKinds lists every kind, for the API's and the metrics' readers.
var BreakKinds = []string{BreakUnknownPayment, BreakMissingPayment, BreakAmountMismatch, BreakUnknownRefund, BreakMissingRefund}

// Alert kinds this package writes (notifications.kind).
const (
	NotifyBreak  = "statement_break"
	NotifyFailed = "statement_failed"
)

// ResolvedBySystem is the resolver of a break the system resolved.
const ResolvedBySystem = "system"

// Errors an operator's request may meet.
var (
	ErrUnknownProvider = apperr.New(apperr.Invalid, "unknown_provider",
		"provider must be an enabled payment provider that publishes statements")
	ErrInvalidDate = apperr.New(apperr.Invalid, "invalid_date",
		"date must be a day (YYYY-MM-DD) that is over in the provider's own calendar")
	ErrRunNotFound   = apperr.New(apperr.NotFound, "run_not_found", "no statement run has this id")
	ErrBreakNotFound = apperr.New(apperr.NotFound, "break_not_found", "no statement break has this id")
	ErrBreakResolved = apperr.New(apperr.Conflict, "break_resolved", "this break is resolved already")
	ErrInvalidNote   = apperr.New(apperr.Invalid, "invalid_note", "note must be valid UTF-8 of at most 512 bytes")
	ErrInvalidStatus = apperr.New(apperr.Invalid, "invalid_status", "status must be open or resolved")
)

// Service runs statements and resolves breaks.
type Service struct {
	store    *model.Store
	pay      *pay.Registry
	orders   *order.Service
	clock    clock.Clock
	log      *zap.Logger
	lookback int
}

// Deps is what the service is built on. Lookback is how many days before
// yesterday the daily job re-checks (ORDERFLOW_STATEMENT_LOOKBACK).
type Deps struct {
	Store    *model.Store
	Pay      *pay.Registry
	Orders   *order.Service
	Clock    clock.Clock
	Log      *zap.Logger
	Lookback int
}

// New builds the service.
func New(d Deps) *Service {
	return &Service{store: d.Store, pay: d.Pay, orders: d.Orders, clock: d.Clock, log: d.Log, lookback: d.Lookback}
}

// source is an enabled provider that publishes statements, or false.
func (s *Service) source(name string) (pay.Statements, bool) {
	p, ok := s.pay.Get(name)
	if !ok {
		return nil, false
	}
	st, ok := p.(pay.Statements)
	return st, ok
}

// Providers lists the enabled providers that publish statements.
func (s *Service) Providers() []string {
	var out []string
	for _, n := range s.pay.Names() {
		if _, ok := s.source(n); ok {
			out = append(out, n)
		}
	}
	return out
}

// dayLayout is how a statement day is written.
const dayLayout = "2006-01-02"

// window is the provider's day as a UTC interval [from, to).
func window(day string, zone *time.Location) (from, to time.Time, err error) {
	d, err := time.ParseInLocation(dayLayout, day, zone)
	if err != nil || d.Format(dayLayout) != day {
		return time.Time{}, time.Time{}, ErrInvalidDate
	}
	return d.UTC(), d.AddDate(0, 0, 1).UTC(), nil
}
