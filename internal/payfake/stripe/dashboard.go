package stripe

import (
	"context"
	"fmt"

	"orderflow/internal/payfake"
)

// DashboardRefund refunds cents of the order's paid intent as an operator
// in Stripe's Dashboard would: no metadata (no orderflow refund number),
// succeeded at once, counted against the intent (later refunds see it),
// listed in the statement, and no webhook (DashboardRefundNotified sends
// one). It returns the refund's id.
func (f *Fake) DashboardRefund(orderNo string, cents int64) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rf, err := f.dashboardRefundLocked(orderNo, cents)
	if err != nil {
		return "", err
	}
	return rf.ID, nil
}

// DashboardRefundNotified is DashboardRefund followed by the refund.created
// webhook Stripe sends for it (the Refund object, created and signed as
// every other webhook), sent now; status is the HTTP answer.
// RefundNotification(ref) is the same webhook again.
func (f *Fake) DashboardRefundNotified(ctx context.Context, orderNo string, cents int64) (ref string, status int, err error) {
	f.mu.Lock()
	rf, err := f.dashboardRefundLocked(orderNo, cents)
	var n *Notification
	if err == nil {
		n = f.refundEventLocked(rf)
	}
	f.mu.Unlock()
	if err != nil {
		return "", 0, err
	}
	status, err = n.Send(ctx)
	return rf.ID, status, err
}

// RefundNotification is a signed refund.created for the refund id, with
// the refund as it is now.
func (f *Fake) RefundNotification(id string) (*Notification, error) {
	if n := payfake.Lookup(&f.mu, f.refunds, id, f.refundEventLocked); n != nil {
		return n, nil
	}
	return nil, fmt.Errorf("stripe fake: no refund %s", id)
}

// refundEventLocked is a refund's refund.created, created when the refund
// was; f.mu held.
func (f *Fake) refundEventLocked(rf *refund) *Notification {
	return f.eventLocked("refund.created", rf.object(f.intents[rf.Intent].Currency), f.WebhookSecret, rf.Created)
}

// dashboardRefundLocked records a dashboard refund; f.mu held.
func (f *Fake) dashboardRefundLocked(orderNo string, cents int64) (*refund, error) {
	in := f.intentLocked(orderNo)
	if in == nil || in.Status != "succeeded" {
		return nil, fmt.Errorf("stripe fake: no paid payment intent for order %s", orderNo)
	}
	if cents <= 0 || cents > in.Received-f.refundedLocked(in.ID) {
		return nil, fmt.Errorf("stripe fake: refund of %d for order %s is more than its unrefunded amount", cents, orderNo)
	}
	rf := f.newRefundLocked(in, cents, map[string]string{})
	rf.Status = "succeeded"
	return rf, nil
}
