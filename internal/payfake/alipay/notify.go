package alipay

import (
	"context"
	"crypto"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	sdk "github.com/smartwalle/alipay/v3"
)

const cryptoSHA256 = crypto.SHA256

// Answer is orderflow's answer to one notification.
type Answer struct {
	Status int
	Body   string
	Err    error
}

// PayOptions shape one payment.
type PayOptions struct {
	Times  int  // the same signed notification sent this many times at once (default 1)
	Tamper bool // change total_amount after signing: the signature no longer verifies
}

// Pay makes a precreated trade paid and (unless DropPaymentNotify) sends its
// signed trade_status_sync notification, returning each answer. A tampered
// notification leaves the trade unpaid.
func (f *Fake) Pay(ctx context.Context, outTradeNo string, o PayOptions) ([]Answer, error) {
	f.mu.Lock()
	t, ok := f.trades[outTradeNo]
	if !ok {
		f.mu.Unlock()
		return nil, fmt.Errorf("alipay fake: no trade %s (check out first)", outTradeNo)
	}
	now := f.now()
	if !o.Tamper {
		t.Status = sdk.TradeStatusSuccess
		if t.PaidAt.IsZero() {
			t.PaidAt = now
		}
	}
	drop := f.switches.DropPaymentNotify
	snapshot := *t
	f.mu.Unlock()
	if drop {
		return nil, nil
	}
	if snapshot.PaidAt.IsZero() {
		snapshot.PaidAt = now
	}
	values, err := f.signed(paidValues(&snapshot, now))
	if err != nil {
		return nil, err
	}
	if o.Tamper {
		values.Set("total_amount", "0.01")
	}
	body := values.Encode()
	n := max(o.Times, 1)
	out := make([]Answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = f.post(ctx, snapshot.NotifyURL, body)
		}()
	}
	wg.Wait()
	return out, nil
}

// timeLayout is how Alipay writes a time, in Beijing time.
const timeLayout = "2006-01-02 15:04:05"

// common is what every notification of trade t carries, sent at now (the
// fake's clock).
func common(t *trade, now time.Time) url.Values {
	at := now.Format(timeLayout)
	return url.Values{
		"notify_time": {at}, "notify_type": {"trade_status_sync"}, "notify_id": {"n" + t.TradeNo + fmt.Sprint(time.Now().UnixNano())},
		"app_id": {AppID}, "charset": {"utf-8"}, "version": {"1.0"},
		"trade_no": {t.TradeNo}, "out_trade_no": {t.OutTradeNo}, "total_amount": {t.TotalAmount},
		"subject": {t.Subject}, "gmt_create": {at}, "seller_id": {SellerID}, "buyer_id": {"2088000000000002"},
	}
}

func paidValues(t *trade, now time.Time) url.Values {
	v := common(t, now)
	v.Set("trade_status", string(sdk.TradeStatusSuccess))
	v.Set("receipt_amount", t.TotalAmount)
	v.Set("buyer_pay_amount", t.TotalAmount)
	v.Set("gmt_payment", t.PaidAt.In(beijing).Format(timeLayout))
	return v
}

// refundValues is Alipay's notification of refund r: the trade closed
// once refunded in full (TRADE_SUCCESS after a part), out_biz_no the
// refund's out_request_no.
func refundValues(t *trade, r *refund) url.Values {
	v := common(t, r.At)
	v.Set("trade_status", string(t.Status)) // TRADE_SUCCESS after a partial refund
	v.Set("out_biz_no", r.OutRequestNo)
	v.Set("refund_fee", r.Amount)
	v.Set("gmt_refund", r.At.Format(timeLayout))
	return v
}

// signed adds sign_type and the RSA2 sign over every other field, sorted.
func (f *Fake) signed(v url.Values) (url.Values, error) {
	sig, err := f.signer.SignValues(v)
	if err != nil {
		return nil, err
	}
	v.Set("sign_type", "RSA2")
	v.Set("sign", base64.StdEncoding.EncodeToString(sig))
	return v, nil
}

// notifyLater sends a notification in the background, retried a few times
// until answered "success" (Alipay retries for a day; the fake briefly).
// f.mu is held by the caller.
func (f *Fake) notifyLater(t *trade, v url.Values) {
	url := t.NotifyURL
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		values, err := f.signed(v)
		if err != nil {
			return
		}
		for range 5 {
			if a := f.post(f.ctx, url, values.Encode()); a.Body == "success" {
				return
			}
			select {
			case <-f.ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
}

func (f *Fake) post(ctx context.Context, url, body string) Answer {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return Answer{Err: err}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded;charset=utf-8")
	resp, err := f.out.Do(req)
	if err != nil {
		return Answer{Err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return Answer{Status: resp.StatusCode, Body: string(b)}
}
