package order

import (
	"context"
	"fmt"

	"orderflow/model"
)

// tradeRecorded handles a notification whose trade the ledger already
// records. For the same order it is a repeat. For another order it is held
// for an operator (model.HeldPayment), with an admin notification, in the
// notification's transaction: a trade names one payment at the provider, so
// delivering would sell twice for one payment and refunding the trade again
// could return the other order's money. A repeat of it adds nothing.
func (s *Service) tradeRecorded(ctx context.Context, tx *model.Store, o *model.Order, pay *model.Payment, rec *recorded) error {
	prior, err := tx.PaymentByTrade(ctx, pay.Provider, pay.TradeNo)
	if err != nil {
		return fmt.Errorf("trade %s: %w", pay.TradeNo, err)
	}
	if prior.OrderID == o.ID {
		rec.result.Repeat = true
		return nil
	}
	paid, err := tx.OrderByID(ctx, prior.OrderID)
	if err != nil {
		return fmt.Errorf("trade %s: the order it pays (id %d): %w", pay.TradeNo, prior.OrderID, err)
	}
	rec.result.Disposition, rec.paidOrderNo = model.PaymentHeld, paid.OrderNo
	fresh, err := tx.InsertHeldPayment(ctx, &model.HeldPayment{
		Provider: pay.Provider, TradeNo: pay.TradeNo, OrderID: o.ID, OrderNo: o.OrderNo, AmountCents: pay.AmountCents,
		PaidOrderID: paid.ID, PaidOrderNo: paid.OrderNo, CreatedAt: pay.CreatedAt,
	})
	if err != nil || !fresh {
		rec.result.Repeat = err == nil
		return err
	}
	return s.notifyAdmin(ctx, tx, "payment-held:"+pay.TradeNo+":"+o.OrderNo, "payment_held",
		"Payment held: trade "+pay.TradeNo+" already pays order "+paid.OrderNo,
		fmt.Sprintf("a signed notification for order %s carries trade %s (%d cents), which the ledger already records for order %s; "+
			"nothing was delivered or refunded: check the trade at the provider and settle it by hand",
			o.OrderNo, pay.TradeNo, pay.AmountCents, paid.OrderNo))
}
