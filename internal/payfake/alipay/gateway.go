package alipay

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	sdk "github.com/smartwalle/alipay/v3"
	"github.com/smartwalle/nsign"
)

// Handler is the gateway: POST form-encoded, the method in "method".
func (f *Fake) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == billPath {
			f.serveBill(w, r)
			return
		}
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		form := r.PostForm
		method := form.Get("method")
		name := strings.ReplaceAll(method, ".", "_") + "_response"
		if !f.verifyApp(form) {
			f.answer(w, name, map[string]any{"code": "40002", "msg": "Invalid Arguments", "sub_code": "isv.invalid-signature", "sub_msg": "验签出错"})
			return
		}
		var biz map[string]any
		_ = json.Unmarshal([]byte(form.Get("biz_content")), &biz)
		str := func(k string) string { s, _ := biz[k].(string); return s }
		switch method {
		case "alipay.trade.precreate":
			f.answer(w, name, f.precreate(str("out_trade_no"), str("total_amount"), str("subject"), form.Get("notify_url")))
		case "alipay.trade.query":
			f.answer(w, name, f.query(str("out_trade_no")))
		case "alipay.trade.refund":
			ans, hang := f.refund(str("out_trade_no"), str("out_request_no"), str("refund_amount"))
			if hang {
				// Recorded; the caller's timeout ends the call with no answer.
				select {
				case <-r.Context().Done():
				case <-f.ctx.Done():
				case <-time.After(time.Minute):
				}
				return
			}
			f.answer(w, name, ans)
		case "alipay.trade.fastpay.refund.query":
			f.answer(w, name, f.refundQuery(str("out_request_no")))
		case "alipay.data.dataservice.bill.downloadurl.query":
			ans, tamper := f.billURL(r, str("bill_type"), str("bill_date"))
			f.write(w, name, ans, tamper)
		default:
			f.answer(w, name, map[string]any{"code": "40004", "msg": "Business Failed", "sub_code": "ACQ.INVALID_METHOD"})
		}
	})
}

// verifyApp checks the request's RSA2 signature with the app's public key:
// every parameter but sign, sorted, as Alipay does (the SDK's encoder).
func (f *Fake) verifyApp(form url.Values) bool {
	sig, err := base64.StdEncoding.DecodeString(form.Get("sign"))
	if err != nil {
		return false
	}
	v := nsign.New(nsign.WithMethod(nsign.NewRSAMethod(cryptoSHA256, nil, f.appPub)), nsign.WithEncoder(sdk.Encoder{}))
	return v.VerifyValues(form, sig, nsign.WithIgnore("sign")) == nil
}

// answer writes {"<name>": body, "sign": RSA2 of body's exact bytes}.
func (f *Fake) answer(w http.ResponseWriter, name string, body map[string]any) {
	f.write(w, name, body, false)
}

// write is answer, with body changed after signing when tamper is set (the
// signature no longer verifies).
func (f *Fake) write(w http.ResponseWriter, name string, body map[string]any, tamper bool) {
	if _, ok := body["msg"]; !ok {
		body["msg"] = "Success"
	}
	data, _ := json.Marshal(body)
	sig, err := f.signer.SignBytes(data)
	if err != nil {
		http.Error(w, "sign", http.StatusInternalServerError)
		return
	}
	if tamper {
		data = append(data[:len(data)-1], `,"tampered":"1"}`...)
	}
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	nameJSON, _ := json.Marshal(name)
	sigJSON, _ := json.Marshal(base64.StdEncoding.EncodeToString(sig))
	_, _ = w.Write([]byte("{" + string(nameJSON) + ":" + string(data) + `,"sign":` + string(sigJSON) + "}"))
}

func notExist() map[string]any {
	return map[string]any{"code": "40004", "msg": "Business Failed", "sub_code": "ACQ.TRADE_NOT_EXIST", "sub_msg": "交易不存在"}
}

func (f *Fake) precreate(outTradeNo, amount, subject, notifyURL string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.trades[outTradeNo]
	if !ok {
		if f.notifyOverride != "" {
			notifyURL = f.notifyOverride
		}
		t = &trade{OutTradeNo: outTradeNo, TradeNo: f.nextTradeNo(), TotalAmount: amount, Subject: subject,
			NotifyURL: notifyURL, Status: sdk.TradeStatusWaitBuyerPay}
		f.trades[outTradeNo] = t
	}
	return map[string]any{"code": "10000", "out_trade_no": outTradeNo, "qr_code": "https://qr.alipay.com/fake" + t.TradeNo}
}

func (f *Fake) query(outTradeNo string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.trades[outTradeNo]
	if !ok {
		return notExist()
	}
	ans := map[string]any{"code": "10000", "out_trade_no": t.OutTradeNo, "trade_no": t.TradeNo,
		"trade_status": string(t.Status), "total_amount": t.TotalAmount}
	if !t.PaidAt.IsZero() {
		ans["send_pay_date"] = t.PaidAt.Format(timeLayout)
	}
	return ans
}

// refund records a refund once per out_request_no (a repeat refunds nothing
// and answers fund_change N, like Alipay) and counts every call.
func (f *Fake) refund(outTradeNo, outRequestNo, amount string) (map[string]any, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sends.Add(outRequestNo)
	t, ok := f.trades[outTradeNo]
	if !ok || t.Status == sdk.TradeStatusWaitBuyerPay {
		return notExist(), false
	}
	change := "N"
	if _, seen := f.refunds[outRequestNo]; !seen {
		// Alipay refunds a trade in parts, each under its own
		// out_request_no, never past the trade's total; the last one closes it.
		cents, total := yuanCents(amount), yuanCents(t.TotalAmount)
		if cents <= 0 || t.Refunded+cents > total {
			return map[string]any{"code": "40004", "msg": "Business Failed",
				"sub_code": "ACQ.REFUND_AMT_NOT_EQUAL_TOTAL", "sub_msg": "退款金额超限"}, false
		}
		t.Refunded += cents
		r := &refund{OutRequestNo: outRequestNo, OutTradeNo: outTradeNo, Amount: amount, At: f.now()}
		f.refunds[outRequestNo] = r
		if t.Refunded == total {
			t.Status = sdk.TradeStatusClosed
		}
		if !f.switches.RefundInProgress {
			change = "Y"
		}
		if !f.switches.DropRefundNotify {
			f.notifyLater(t, refundValues(t, r))
		}
	}
	if f.switches.TimeoutRefunds > 0 {
		f.switches.TimeoutRefunds--
		return nil, true
	}
	return map[string]any{"code": "10000", "out_trade_no": outTradeNo, "trade_no": t.TradeNo,
		"fund_change": change, "refund_fee": amount}, false
}

func (f *Fake) refundQuery(outRequestNo string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.refunds[outRequestNo]
	if !ok {
		return map[string]any{"code": "10000", "out_request_no": outRequestNo}
	}
	return map[string]any{"code": "10000", "out_request_no": outRequestNo, "out_trade_no": r.OutTradeNo,
		"refund_amount": r.Amount, "refund_status": "REFUND_SUCCESS"}
}

// yuanCents reads a yuan amount ("12.34", "12.3", "12") as cents; -1 when
// it is not one.
func yuanCents(yuan string) int64 {
	whole, frac, _ := strings.Cut(yuan, ".")
	if len(frac) > 2 {
		return -1
	}
	frac += "00"[len(frac):]
	w, err1 := strconv.ParseInt(whole, 10, 64)
	c, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil || w < 0 {
		return -1
	}
	return w*100 + c
}
