package wechat

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

type prepayBody struct {
	AppID       string    `json:"appid"`
	MchID       string    `json:"mchid"`
	Description string    `json:"description"`
	OutTradeNo  string    `json:"out_trade_no"`
	TimeExpire  time.Time `json:"time_expire"`
	NotifyURL   string    `json:"notify_url"`
	Amount      struct {
		Total    int64  `json:"total"`
		Currency string `json:"currency"`
	} `json:"amount"`
}

// prepay places a Native order; the same out_trade_no again gets the same
// code_url, as WeChat Pay does while the order is open.
func (f *Fake) prepay(w http.ResponseWriter, _ *http.Request, body []byte) {
	var b prepayBody
	if err := json.Unmarshal(body, &b); err != nil || b.OutTradeNo == "" || b.Amount.Total <= 0 || b.NotifyURL == "" {
		f.fail(w, http.StatusBadRequest, "PARAM_ERROR", "out_trade_no, amount.total and notify_url are required")
		return
	}
	if b.AppID != f.Keys.AppID || b.MchID != f.Keys.MchID {
		f.fail(w, http.StatusBadRequest, "APPID_MCHID_NOT_MATCH", "appid and mchid do not match")
		return
	}
	if b.Amount.Currency != "" && b.Amount.Currency != "CNY" {
		f.fail(w, http.StatusBadRequest, "PARAM_ERROR", "currency must be CNY")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.orders[b.OutTradeNo]
	switch {
	case o == nil:
		f.seq++
		o = &order{OutTradeNo: b.OutTradeNo, Total: b.Amount.Total, NotifyURL: b.NotifyURL, Description: b.Description,
			State: "NOTPAY", CodeURL: "weixin://wxpay/bizpayurl?pr=" + randHex(6)}
		f.orders[b.OutTradeNo] = o
	case o.Total != b.Amount.Total:
		f.fail(w, http.StatusBadRequest, "INVALID_REQUEST", "out_trade_no already used with other parameters")
		return
	case o.State == "SUCCESS":
		f.fail(w, http.StatusBadRequest, "ORDERPAID", "order already paid")
		return
	}
	f.reply(w, http.StatusOK, map[string]string{"code_url": o.CodeURL})
}

// queryOrder answers a transaction as WeChat Pay's order query does.
func (f *Fake) queryOrder(w http.ResponseWriter, r *http.Request, _ []byte) {
	if r.URL.Query().Get("mchid") != f.Keys.MchID {
		f.fail(w, http.StatusBadRequest, "PARAM_ERROR", "mchid is required")
		return
	}
	f.replyFound(w, "ORDER_NOT_EXIST", "order does not exist", func() map[string]any {
		if o := f.orders[r.PathValue("no")]; o != nil {
			return f.transaction(o)
		}
		return nil
	})
}

// transaction is an order as WeChat Pay's Transaction object; f.mu held.
func (f *Fake) transaction(o *order) map[string]any {
	tx := map[string]any{
		"appid": f.Keys.AppID, "mchid": f.Keys.MchID, "out_trade_no": o.OutTradeNo,
		"trade_type": "NATIVE", "trade_state": o.State, "trade_state_desc": o.State,
		"amount": map[string]any{"total": o.Total, "currency": "CNY"},
	}
	if o.State == "SUCCESS" {
		tx["transaction_id"] = o.TransactionID
		tx["bank_type"] = "OTHERS"
		tx["success_time"] = o.SuccessTime.In(beijing).Format(time.RFC3339)
		tx["payer"] = map[string]any{"openid": "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o"}
		tx["amount"] = map[string]any{"total": o.Total, "payer_total": o.Total, "currency": "CNY", "payer_currency": "CNY"}
	}
	return tx
}

type refundBody struct {
	TransactionID string `json:"transaction_id"`
	OutTradeNo    string `json:"out_trade_no"`
	OutRefundNo   string `json:"out_refund_no"`
	NotifyURL     string `json:"notify_url"`
	Amount        struct {
		Refund   int64  `json:"refund"`
		Total    int64  `json:"total"`
		Currency string `json:"currency"`
	} `json:"amount"`
}

// createRefund records the refund under out_refund_no (a second request
// with the same number gets the same refund), answers PROCESSING, settles it
// at once and sends REFUND.SUCCESS unless dropped. With RefundTimeout the
// answer is held until the caller gives up.
func (f *Fake) createRefund(w http.ResponseWriter, r *http.Request, body []byte) {
	var b refundBody
	if err := json.Unmarshal(body, &b); err != nil || b.OutRefundNo == "" || b.Amount.Refund <= 0 {
		f.fail(w, http.StatusBadRequest, "PARAM_ERROR", "out_refund_no and amount.refund are required")
		return
	}
	f.mu.Lock()
	f.sends.Add(b.OutRefundNo)
	rf := f.refunds[b.OutRefundNo]
	if rf == nil {
		o := f.byTxID[b.TransactionID]
		if o == nil {
			o = f.orders[b.OutTradeNo]
		}
		switch {
		case o == nil || o.State != "SUCCESS":
			f.mu.Unlock()
			f.fail(w, http.StatusNotFound, "RESOURCE_NOT_EXISTS", "order does not exist or is not paid")
			return
		case b.Amount.Total != o.Total || b.Amount.Refund > o.Total-o.Refunded:
			f.mu.Unlock()
			f.fail(w, http.StatusBadRequest, "INVALID_REQUEST", "amount.total or amount.refund does not fit the order")
			return
		}
		f.seq++
		o.Refunded += b.Amount.Refund
		rf = &refund{RefundID: fmt.Sprintf("50300%015d", f.seq), OutRefundNo: b.OutRefundNo, NotifyURL: b.NotifyURL,
			Order: o, Amount: b.Amount.Refund, Status: "PROCESSING", Created: f.now()}
		f.refunds[b.OutRefundNo] = rf
	}
	answer := f.refundObject(rf)
	if rf.Status == "PROCESSING" {
		rf.Status = "SUCCESS"
		if !f.DropRefundNotify.Load() && rf.NotifyURL != "" {
			f.sendAsync(rf.NotifyURL, "REFUND.SUCCESS", "refund", f.refundResource(rf))
		}
	}
	f.mu.Unlock()
	if f.RefundTimeout.Load() {
		f.sent.Hold(r)
		return
	}
	f.reply(w, http.StatusOK, answer)
}

func (f *Fake) queryRefund(w http.ResponseWriter, r *http.Request, _ []byte) {
	f.replyFound(w, "RESOURCE_NOT_EXISTS", "refund does not exist", func() map[string]any {
		if rf := f.refunds[r.PathValue("no")]; rf != nil {
			return f.refundObject(rf)
		}
		return nil
	})
}

// replyFound answers what find (run under f.mu) returns, or 404 with code
// and message when it finds nothing.
func (f *Fake) replyFound(w http.ResponseWriter, code, message string, find func() map[string]any) {
	f.mu.Lock()
	answer := find()
	f.mu.Unlock()
	if answer == nil {
		f.fail(w, http.StatusNotFound, code, message)
		return
	}
	f.reply(w, http.StatusOK, answer)
}

// refundObject is WeChat Pay's Refund object; f.mu held.
func (f *Fake) refundObject(rf *refund) map[string]any {
	return map[string]any{
		"refund_id": rf.RefundID, "out_refund_no": rf.OutRefundNo,
		"transaction_id": rf.Order.TransactionID, "out_trade_no": rf.Order.OutTradeNo,
		"channel": "ORIGINAL", "user_received_account": "支付用户零钱",
		"create_time": rf.Created.In(beijing).Format(time.RFC3339), "status": rf.Status, "funds_account": "AVAILABLE",
		"amount": map[string]any{"total": rf.Order.Total, "refund": rf.Amount, "payer_total": rf.Order.Total,
			"payer_refund": rf.Amount, "settlement_refund": rf.Amount, "settlement_total": rf.Order.Total,
			"discount_refund": 0, "currency": "CNY"},
	}
}

// refundResource is the plaintext of a REFUND.* notification; f.mu held.
func (f *Fake) refundResource(rf *refund) map[string]any {
	return map[string]any{
		"mchid": f.Keys.MchID, "out_trade_no": rf.Order.OutTradeNo, "transaction_id": rf.Order.TransactionID,
		"out_refund_no": rf.OutRefundNo, "refund_id": rf.RefundID, "refund_status": rf.Status,
		"success_time": rf.Created.In(beijing).Format(time.RFC3339), "user_received_account": "支付用户零钱",
		"amount": map[string]any{"total": rf.Order.Total, "refund": rf.Amount, "payer_total": rf.Order.Total, "payer_refund": rf.Amount},
	}
}
