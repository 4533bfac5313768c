package wechat

import (
	"context"
	"fmt"

	"orderflow/internal/payfake"
)

// DashboardRefund is a refund an operator made in WeChat Pay's merchant
// platform: it counts against the trade (a later refund sees it), it is
// settled at once and listed in the day's bill, and no notification is
// sent (DashboardRefundNotified sends one). WeChat Pay fills its
// out_refund_no (商户退款单号) with a number of its own; the fake uses the
// refund id, digits as WeChat Pay's are. ref is the refund id (微信退款单号).
func (f *Fake) DashboardRefund(orderNo string, cents int64) (ref string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dashboardRefundLocked(orderNo, cents)
}

// DashboardRefundNotified is DashboardRefund followed by its REFUND.SUCCESS
// notification, signed and encrypted as every other, sent to the order's
// notify_url now; status is the HTTP answer. RefundNotification(ref) is
// the same notification again.
func (f *Fake) DashboardRefundNotified(ctx context.Context, orderNo string, cents int64) (ref string, status int, err error) {
	f.mu.Lock()
	ref, err = f.dashboardRefundLocked(orderNo, cents)
	var n *Notification
	if err == nil {
		n = f.refundNotificationLocked(f.refunds[ref])
	}
	f.mu.Unlock()
	if err != nil {
		return "", 0, err
	}
	status, err = n.Send(ctx)
	return ref, status, err
}

// RefundNotification is the signed REFUND.SUCCESS of the refund whose
// out_refund_no is outRefundNo (a dashboard refund's is its refund id), to
// the order's notify_url when the refund request named none.
func (f *Fake) RefundNotification(outRefundNo string) (*Notification, error) {
	if n := payfake.Lookup(&f.mu, f.refunds, outRefundNo, f.refundNotificationLocked); n != nil {
		return n, nil
	}
	return nil, fmt.Errorf("wechat fake: no refund %s", outRefundNo)
}

// refundNotificationLocked is a refund's REFUND.SUCCESS; f.mu held.
func (f *Fake) refundNotificationLocked(rf *refund) *Notification {
	url := rf.NotifyURL
	if url == "" {
		url = rf.Order.NotifyURL
	}
	return f.notification(url, "REFUND.SUCCESS", "refund", f.refundResource(rf), false)
}

// dashboardRefundLocked records a dashboard refund; f.mu held.
func (f *Fake) dashboardRefundLocked(orderNo string, cents int64) (ref string, err error) {
	o := f.orders[orderNo]
	switch {
	case o == nil || o.State != "SUCCESS":
		return "", fmt.Errorf("wechat fake: order %s is not paid", orderNo)
	case cents <= 0 || cents > o.Total-o.Refunded:
		return "", fmt.Errorf("wechat fake: %d of order %s: nothing or more than it has left (%d)", cents, orderNo, o.Total-o.Refunded)
	}
	f.seq++
	id := fmt.Sprintf("50300%015d", f.seq)
	o.Refunded += cents
	f.refunds[id] = &refund{RefundID: id, OutRefundNo: id, Order: o, Amount: cents, Status: "SUCCESS", Created: f.now()}
	return id, nil
}

// PayUnseen is a buyer's payment of cents for orderNo that orderflow never
// heard of: the trade (made at cents if the fake never saw the order, its
// amount set to cents if it was not paid) is recorded as paid now, and no
// notification is sent; a later order query sees it. tradeNo is its
// transaction_id. An order already paid is an error: WeChat Pay takes one
// payment per out_trade_no.
func (f *Fake) PayUnseen(orderNo string, cents int64) (tradeNo string, err error) {
	if cents <= 0 {
		return "", fmt.Errorf("wechat fake: payment of %d", cents)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.orders[orderNo]
	if o == nil {
		o = &order{OutTradeNo: orderNo, Description: orderNo, CodeURL: "weixin://wxpay/bizpayurl?pr=" + randHex(6)}
		f.orders[orderNo] = o
	}
	if o.State == "SUCCESS" {
		return "", fmt.Errorf("wechat fake: order %s is already paid (%s)", orderNo, o.TransactionID)
	}
	f.seq++
	o.Total, o.State, o.SuccessTime = cents, "SUCCESS", f.now()
	o.TransactionID = fmt.Sprintf("42000%015d", f.seq)
	f.byTxID[o.TransactionID] = o
	return o.TransactionID, nil
}
