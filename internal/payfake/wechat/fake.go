// Package wechat is a local WeChat Pay API v3 for tests: it speaks the real
// wire format (JSON bodies, the WECHATPAY2-SHA256-RSA2048 Authorization it
// verifies with the merchant's public key, responses and notifications
// signed with its platform key, notification resources AES-256-GCM
// encrypted with the APIv3 key) and keeps orders and refunds in memory.
// Keys are generated fresh by New. Switches drop notifications, make the
// refund call time out after it was recorded, and tamper with notifications.
// It publishes the daily trade bill (GET /v3/bill/tradebill and the file it
// points to, statement.go) from the trades and refunds it has recorded, on
// its settable clock, with knobs that drop or alter a line, add a refund
// made in the merchant platform and a payment orderflow never heard of.
package wechat

import (
	"crypto/rsa"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"orderflow/internal/payfake"
)

// Keys are the settings an orderflow merchant account needs to talk to the
// fake (the ORDERFLOW_WECHAT_* values).
type Keys struct {
	MchID               string
	AppID               string
	CertSerial          string
	PrivateKey          string // the merchant's, PEM
	APIv3Key            string
	PlatformPublicKey   string // PEM
	PlatformPublicKeyID string
}

// Fake is one running WeChat Pay. Its switches may be flipped at any time.
type Fake struct {
	// URL is the base URL (ORDERFLOW_WECHAT_API_URL).
	URL string
	// Keys configure orderflow for this fake.
	Keys Keys
	// StatementKnobs spoil the bills built from now on: a ref is a
	// payment's transaction_id or a refund's refund_id; an altered payment
	// lists the cents as 应结订单金额 and 订单金额, its fee and the summary
	// following.
	payfake.StatementKnobs

	// DropPayNotify: Pay marks the order paid but sends no notification.
	DropPayNotify atomic.Bool
	// DropRefundNotify: refunds succeed with no REFUND.SUCCESS notification.
	DropRefundNotify atomic.Bool
	// RefundTimeout: a refund call is recorded (and succeeds) but its answer
	// never comes; the caller's timeout fires.
	RefundTimeout atomic.Bool
	// TamperBill: a bill file is served with one byte changed after its
	// SHA1 was given, as a file spoiled on the way would be.
	TamperBill atomic.Bool
	// MisSignBill: the trade bill answer is signed with a key that is not
	// WeChat Pay's.
	MisSignBill atomic.Bool

	srv          *httptest.Server
	merchantPub  *rsa.PublicKey
	platformPriv *rsa.PrivateKey
	otherPriv    *rsa.PrivateKey     // signs mis-signed notifications
	sent         *payfake.Deliveries // notifications in flight, held answers

	mu             sync.Mutex
	notifyOverride string             // NotifyTo
	orders         map[string]*order  // by out_trade_no
	byTxID         map[string]*order  // by transaction_id
	refunds        map[string]*refund // by out_refund_no
	sends          payfake.Sends      // refund requests received, by out_refund_no
	seq            int
	clock          func() time.Time  // SetClock
	bills          map[string][]byte // bill files served, by download token
}

type order struct {
	OutTradeNo, TransactionID, CodeURL, NotifyURL, Description string
	Total                                                      int64
	State                                                      string // NOTPAY, SUCCESS, CLOSED
	SuccessTime                                                time.Time
	Refunded                                                   int64
}

type refund struct {
	RefundID, OutRefundNo, NotifyURL string
	Order                            *order
	Amount                           int64
	Status                           string    // PROCESSING, SUCCESS
	Created                          time.Time // also its success: the fake settles a refund at once
}

// New starts a fake with fresh merchant and platform keys.
func New() (*Fake, error) {
	keys, err := payfake.RSAKeys(3)
	if err != nil {
		return nil, err
	}
	merchant, platform, other := keys[0], keys[1], keys[2]
	pub, err := x509.MarshalPKIXPublicKey(&platform.PublicKey)
	if err != nil {
		return nil, err
	}
	priv, err := x509.MarshalPKCS8PrivateKey(merchant)
	if err != nil {
		return nil, err
	}
	f := &Fake{
		Keys: Keys{
			MchID:               "1900000109",
			AppID:               "wxd678efh567hg6787",
			CertSerial:          randHex(20),
			PrivateKey:          payfake.PEM("PRIVATE KEY", priv),
			APIv3Key:            randHex(16),
			PlatformPublicKey:   payfake.PEM("PUBLIC KEY", pub),
			PlatformPublicKeyID: "PUB_KEY_ID_" + randHex(8),
		},
		merchantPub:  &merchant.PublicKey,
		platformPriv: platform,
		otherPriv:    other,
		sent:         payfake.NewDeliveries(),
		orders:       map[string]*order{},
		byTxID:       map[string]*order{},
		refunds:      map[string]*refund{},
		clock:        time.Now,
		bills:        map[string][]byte{},
	}
	f.srv = httptest.NewServer(f.routes())
	f.URL = f.srv.URL
	return f, nil
}

// Close stops the server after the notifications in flight.
func (f *Fake) Close() {
	f.sent.Close(f.srv)
}

// NotifyTo sends every notification to url instead of the notify_url the
// request named (a test whose API listener was not known when orderflow's
// notify URL setting was made).
func (f *Fake) NotifyTo(url string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notifyOverride = url
}

// SetClock makes now the fake's clock for every time it records (a
// payment's success_time, a refund's time, a notification's create_time)
// and for which bill days are published, so a test can put trades on a past
// day. Signatures keep the real time: WeChat Pay's and the SDK's checks
// of a timestamp are against the wall clock.
func (f *Fake) SetClock(now func() time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clock = now
}

// now is the fake's clock; f.mu held.
func (f *Fake) now() time.Time { return f.clock() }

// RefundSends is how many refund requests arrived for out_refund_no.
func (f *Fake) RefundSends(outRefundNo string) int { return f.sends.Of(outRefundNo) }

// RefundStatus is a refund's status ("" when unknown).
func (f *Fake) RefundStatus(outRefundNo string) string {
	return payfake.Lookup(&f.mu, f.refunds, outRefundNo, func(r *refund) string { return r.Status })
}

// RefundID is WeChat Pay's refund_id of out_refund_no ("" when unknown).
func (f *Fake) RefundID(outRefundNo string) string {
	return payfake.Lookup(&f.mu, f.refunds, outRefundNo, func(r *refund) string { return r.RefundID })
}

// Refunds is how many refunds the fake holds in all.
func (f *Fake) Refunds() int { return payfake.Len(&f.mu, f.refunds) }

func (f *Fake) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v3/pay/transactions/native", f.verified(f.prepay))
	mux.HandleFunc("GET /v3/pay/transactions/out-trade-no/{no}", f.verified(f.queryOrder))
	mux.HandleFunc("POST /v3/refund/domestic/refunds", f.verified(f.createRefund))
	mux.HandleFunc("GET /v3/refund/domestic/refunds/{no}", f.verified(f.queryRefund))
	mux.HandleFunc("GET /v3/bill/tradebill", f.verified(f.tradeBill))
	mux.HandleFunc("GET /v3/billdownload/file", f.verified(f.billFile))
	return mux
}

// OrderRefunded is what the refunds of out_trade_no returned, in cents.
func (f *Fake) OrderRefunded(outTradeNo string) int64 {
	return payfake.Lookup(&f.mu, f.orders, outTradeNo, func(o *order) int64 { return o.Refunded })
}

// randHex is payfake.RandHex, the fakes' ids and secrets.
var randHex = payfake.RandHex
