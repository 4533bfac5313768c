package wechat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"orderflow/internal/infra/pay"

	"github.com/wechatpay-apiv3/wechatpay-go/services/payments"
)

// refundResource is the decrypted resource of a REFUND.* notification (the
// SDK has no model for it).
type refundResource struct {
	Mchid         string `json:"mchid"`
	OutRefundNo   string `json:"out_refund_no"`
	RefundID      string `json:"refund_id"`
	TransactionID string `json:"transaction_id"`
	RefundStatus  string `json:"refund_status"`
	SuccessTime   string `json:"success_time"`
	Amount        struct {
		Refund int64 `json:"refund"`
	} `json:"amount"`
}

// update is the refund update a REFUND.* resource says. Its RefundNo is
// out_refund_no whatever its shape: a refund made in the merchant platform
// carries a number WeChat Pay made up, which the ledger does not hold, and
// refund_id, transaction_id and amount.refund let it be recorded all the
// same.
func (rf *refundResource) update(eventID string) (*pay.RefundUpdate, error) {
	u := &pay.RefundUpdate{RefundNo: rf.OutRefundNo, Status: statusWord(rf.RefundStatus), Ref: rf.RefundID,
		TradeNo: rf.TransactionID, AmountCents: rf.Amount.Refund}
	if rf.SuccessTime != "" {
		at, err := time.Parse(time.RFC3339, rf.SuccessTime)
		if err != nil {
			return nil, fmt.Errorf("wechat notify %s: refund %s: success_time %q is not RFC 3339", eventID, rf.RefundID, rf.SuccessTime)
		}
		// In the statement's zone, as the bill's lines are.
		u.At = at.In(shanghai)
	}
	return u, nil
}

// Parse lets the SDK verify the Wechatpay-Signature headers with WeChat
// Pay's public key and decrypt the AES-256-GCM resource with the APIv3 key;
// nothing is read before both pass. A payment is TRANSACTION.SUCCESS, a
// refund update REFUND.*; other events are acknowledged and ignored.
func (p *Provider) Parse(r *http.Request, body []byte) (*pay.Event, error) {
	// The SDK reads the body from the request; the caller already has.
	req := r.Clone(r.Context())
	req.Body = io.NopCloser(bytes.NewReader(body))
	content := map[string]any{}
	n, err := p.notify.ParseNotifyRequest(r.Context(), req, &content)
	if err != nil {
		// The SDK's message dumps the whole request; keep none of it.
		return nil, pay.ErrBadSignature
	}
	plain := []byte(n.Resource.Plaintext)
	switch {
	case n.EventType == "TRANSACTION.SUCCESS":
		var tx payments.Transaction
		if err := json.Unmarshal(plain, &tx); err != nil {
			return nil, fmt.Errorf("wechat notify %s: decode transaction: %w", n.ID, err)
		}
		paid, err := p.paid(&tx)
		if err != nil {
			return nil, err
		}
		return &pay.Event{Paid: paid}, nil
	case strings.HasPrefix(n.EventType, "REFUND."):
		var rf refundResource
		if err := json.Unmarshal(plain, &rf); err != nil {
			return nil, fmt.Errorf("wechat notify %s: decode refund: %w", n.ID, err)
		}
		if rf.Mchid != p.cfg.MchID || rf.OutRefundNo == "" {
			return nil, fmt.Errorf("wechat notify %s: refund for another merchant or without out_refund_no", n.ID)
		}
		u, err := rf.update(n.ID)
		if err != nil {
			return nil, err
		}
		return &pay.Event{Refund: u}, nil
	default:
		return &pay.Event{}, nil
	}
}
