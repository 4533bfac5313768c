package wechat

import (
	"context"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wechatpay-apiv3/wechatpay-go/core/auth/verifiers"
	"github.com/wechatpay-apiv3/wechatpay-go/utils"
)

// verified checks the merchant's Authorization header the way WeChat Pay
// does — WECHATPAY2-SHA256-RSA2048 over "method\nURI\ntimestamp\nnonce\nbody\n"
// under the merchant key whose serial and mchid it names — before next runs.
func (f *Fake) verified(next func(w http.ResponseWriter, r *http.Request, body []byte)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			f.fail(w, http.StatusBadRequest, "PARAM_ERROR", "unreadable body")
			return
		}
		a, ok := strings.CutPrefix(r.Header.Get("Authorization"), "WECHATPAY2-SHA256-RSA2048 ")
		if !ok {
			f.fail(w, http.StatusUnauthorized, "SIGN_ERROR", "missing or unknown Authorization scheme")
			return
		}
		fields := map[string]string{}
		for _, kv := range strings.Split(a, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
			fields[k] = strings.Trim(v, `"`)
		}
		ts, _ := strconv.ParseInt(fields["timestamp"], 10, 64)
		if fields["mchid"] != f.Keys.MchID || fields["serial_no"] != f.Keys.CertSerial ||
			time.Since(time.Unix(ts, 0)).Abs() > 5*time.Minute {
			f.fail(w, http.StatusUnauthorized, "SIGN_ERROR", "mchid, serial_no or timestamp does not match")
			return
		}
		msg := fmt.Sprintf("%s\n%s\n%s\n%s\n%s\n", r.Method, r.URL.RequestURI(), fields["timestamp"], fields["nonce_str"], body)
		v := verifiers.NewSHA256WithRSAPubkeyVerifier(f.Keys.CertSerial, *f.merchantPub)
		if err := v.Verify(context.Background(), f.Keys.CertSerial, msg, fields["signature"]); err != nil {
			f.fail(w, http.StatusUnauthorized, "SIGN_ERROR", "signature does not verify")
			return
		}
		next(w, r, body)
	}
}

// signedHeaders are WeChat Pay's Wechatpay-* headers for body under priv.
func (f *Fake) signedHeaders(h http.Header, body []byte, priv *rsa.PrivateKey) {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	nonce := randHex(16)
	sig, err := utils.SignSHA256WithRSA(ts+"\n"+nonce+"\n"+string(body)+"\n", priv)
	if err != nil {
		panic(err) // a 2048-bit key always signs
	}
	h.Set("Wechatpay-Timestamp", ts)
	h.Set("Wechatpay-Nonce", nonce)
	h.Set("Wechatpay-Signature", sig)
	h.Set("Wechatpay-Serial", f.Keys.PlatformPublicKeyID)
	h.Set("Wechatpay-Signature-Type", "WECHATPAY2-SHA256-RSA2048")
	h.Set("Request-Id", randHex(8))
}

// reply writes v as a signed JSON answer.
func (f *Fake) reply(w http.ResponseWriter, status int, v any) {
	f.replySigned(w, status, v, f.platformPriv)
}

// replySigned writes v as a JSON answer signed with priv.
func (f *Fake) replySigned(w http.ResponseWriter, status int, v any, priv *rsa.PrivateKey) {
	body, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	f.signedHeaders(w.Header(), body, priv)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// fail writes WeChat Pay's error object.
func (f *Fake) fail(w http.ResponseWriter, status int, code, message string) {
	f.reply(w, status, map[string]string{"code": code, "message": message})
}
