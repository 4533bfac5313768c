package wechat

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"orderflow/internal/payfake"
)

// Notification is one signed notification, ready to POST (or to spoil).
type Notification struct{ payfake.Notification }

// Pay marks the order paid, as a buyer scanning its code would, and sends
// TRANSACTION.SUCCESS to its notify_url unless DropPayNotify is set. It
// returns the notification (sent or not) so a test can send it again.
func (f *Fake) Pay(ctx context.Context, outTradeNo string) (*Notification, int, error) {
	f.mu.Lock()
	o := f.orders[outTradeNo]
	if o == nil {
		f.mu.Unlock()
		return nil, 0, fmt.Errorf("wechat fake: no order %s", outTradeNo)
	}
	if o.State != "SUCCESS" {
		f.seq++
		o.State = "SUCCESS"
		o.TransactionID = fmt.Sprintf("42000%015d", f.seq)
		o.SuccessTime = f.now()
		f.byTxID[o.TransactionID] = o
	}
	n := f.notification(o.NotifyURL, "TRANSACTION.SUCCESS", "transaction", f.transaction(o), false)
	f.mu.Unlock()
	status, err := n.SendUnless(ctx, f.DropPayNotify.Load())
	return n, status, err
}

// PaymentNotification is the signed TRANSACTION.SUCCESS of a paid order.
func (f *Fake) PaymentNotification(outTradeNo string) (*Notification, error) {
	return f.orderNotification(outTradeNo, false)
}

// MisSignedNotification is the same notification signed with a key that is
// not WeChat Pay's.
func (f *Fake) MisSignedNotification(outTradeNo string) (*Notification, error) {
	return f.orderNotification(outTradeNo, true)
}

func (f *Fake) orderNotification(outTradeNo string, misSign bool) (*Notification, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.orders[outTradeNo]
	if o == nil || o.State != "SUCCESS" {
		return nil, fmt.Errorf("wechat fake: order %s is not paid", outTradeNo)
	}
	return f.notification(o.NotifyURL, "TRANSACTION.SUCCESS", "transaction", f.transaction(o), misSign), nil
}

// ForgedNotification is a TRANSACTION.SUCCESS for an order the buyer has
// not paid (the fake's state stays as it is), as a forger would send it:
// signed with WeChat Pay's key (then spoil it with Tampered) or, misSign,
// with another key.
func (f *Fake) ForgedNotification(outTradeNo string, misSign bool) (*Notification, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.orders[outTradeNo]
	if o == nil {
		return nil, fmt.Errorf("wechat fake: no order %s", outTradeNo)
	}
	c := *o
	c.State, c.TransactionID, c.SuccessTime = "SUCCESS", "4200000000000000000000", f.now()
	return f.notification(o.NotifyURL, "TRANSACTION.SUCCESS", "transaction", f.transaction(&c), misSign), nil
}

// TradeNo is the transaction_id of a paid order ("" before).
func (f *Fake) TradeNo(outTradeNo string) string {
	return payfake.Lookup(&f.mu, f.orders, outTradeNo, func(o *order) string { return o.TransactionID })
}

// Tampered is a copy of n with its body changed after signing (a different
// amount in the summary), which the signature no longer covers.
func (n *Notification) Tampered() *Notification {
	return &Notification{*n.Spoiled(`"summary":"`, `x`)}
}

// notification encrypts resource with the APIv3 key (AEAD_AES_256_GCM, the
// associated data and nonce in the envelope) and signs the envelope; f.mu held.
func (f *Fake) notification(url, eventType, originalType string, resource any, misSign bool) *Notification {
	if f.notifyOverride != "" {
		url = f.notifyOverride
	}
	plain, err := json.Marshal(resource)
	if err != nil {
		panic(err)
	}
	block, err := aes.NewCipher([]byte(f.Keys.APIv3Key))
	if err != nil {
		panic(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	nonce := randHex(6) // 12 characters, used as the 12-byte GCM nonce
	ad := originalType
	f.seq++
	body, err := json.Marshal(map[string]any{
		"id": fmt.Sprintf("EV-%d-%s", f.seq, randHex(4)), "create_time": f.now().In(beijing).Format(time.RFC3339),
		"resource_type": "encrypt-resource", "event_type": eventType, "summary": "支付成功",
		"resource": map[string]string{
			"original_type": originalType, "algorithm": "AEAD_AES_256_GCM", "associated_data": ad, "nonce": nonce,
			"ciphertext": base64.StdEncoding.EncodeToString(gcm.Seal(nil, []byte(nonce), plain, []byte(ad))),
		},
	})
	if err != nil {
		panic(err)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	key := f.platformPriv
	if misSign {
		key = f.otherPriv
	}
	f.signedHeaders(h, body, key)
	return &Notification{payfake.Notification{URL: url, Header: h, Body: body}}
}

// sendAsync delivers a notification in the background, retrying a few
// times on a non-2xx answer as WeChat Pay does (on a much shorter
// schedule); f.mu held.
func (f *Fake) sendAsync(url, eventType, originalType string, resource any) {
	n := f.notification(url, eventType, originalType, resource, false)
	f.sent.Go(&n.Notification)
}
