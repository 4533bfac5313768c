// Package alipay is a local fake of Alipay's open-platform gateway for
// tests and chaos: it speaks the real wire format (form-encoded requests
// signed RSA2 by the app, JSON "<method>_response" + "sign" answers and
// form-encoded notifications signed RSA2 with "Alipay's" key), with key
// pairs it generates itself, and switches to drop the payment notification,
// drop the refund callback, answer refunds as still in progress, time out a
// refund call after recording it, and tamper with a notification. It
// publishes its daily trade bill (statement.go) from what it recorded, at
// the times its settable clock gave. It signs and verifies with the same
// SDK the provider uses; it writes no crypto.
package alipay

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"fmt"
	"net/http"
	"sync"
	"time"

	"orderflow/internal/payfake"

	sdk "github.com/smartwalle/alipay/v3"
)

// AppID is the fake app's id.
const AppID = "2021000000000001"

// SellerID is the fake merchant's Alipay account (pid): seller_id in
// notifications, the bill's account and file names.
const SellerID = "2088000000000001"

// beijing is Alipay's time zone (UTC+8 all year).
var beijing = time.FixedZone("CST", 8*3600)

// Fake is one fake gateway. Serve Handler on a listener; Close waits for
// its background callbacks.
type Fake struct {
	// AppPrivateKey is the app's key orderflow signs with (PEM); AlipayPublicKey
	// is the key orderflow verifies "Alipay" with (PEM).
	AppPrivateKey   string
	AlipayPublicKey string
	// StatementKnobs spoil the bill: a ref is a payment's trade number, or
	// a refund's "<trade_no>/<out_request_no>" (what DashboardRefund
	// returns); only a payment's amount can be altered.
	payfake.StatementKnobs

	signer   *sdk.Client // holds "Alipay's" private key: signs answers and notifications
	appPub   *rsa.PublicKey
	out      *http.Client
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	mu       sync.Mutex
	trades   map[string]*trade  // by out_trade_no
	refunds  map[string]*refund // by out_request_no
	sends    payfake.Sends      // alipay.trade.refund calls, by out_request_no
	switches Switches
	seq      int
	clock    func() time.Time
	bills    map[string]string // the bill download URLs handed out: fileId → bill day
	// notifyOverride, when set, replaces every trade's notify_url.
	notifyOverride string
}

// Switches are the faults the fake injects.
type Switches struct {
	DropPaymentNotify bool // pay without telling orderflow (a lost notification)
	DropRefundNotify  bool // refund without the callback
	RefundInProgress  bool // answer refunds fund_change=N: only the query confirms
	TimeoutRefunds    int  // the next n refund calls are recorded, then never answered
	TamperBillAnswer  bool // alter the bill download URL answer after signing it
	CorruptBill       bool // flip a byte inside the bill zip's detail file (its CRC-32 fails)
}

type trade struct {
	OutTradeNo, TradeNo, Subject, NotifyURL string
	TotalAmount                             string
	Status                                  sdk.TradeStatus
	Refunded                                int64     // cents refunded so far
	PaidAt                                  time.Time // gmt_payment; zero until paid
}

type refund struct {
	OutRequestNo, OutTradeNo, Amount string
	At                               time.Time // gmt_refund
	Dashboard                        bool      // made in the dashboard, not through the gateway
}

// New generates the fake's two key pairs (the app's and "Alipay's").
func New() (*Fake, error) {
	keys, err := payfake.RSAKeys(2)
	if err != nil {
		return nil, err
	}
	appKey, aliKey := keys[0], keys[1]
	aliPriv := payfake.PEM("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(aliKey))
	signer, err := sdk.New(AppID, aliPriv, true)
	if err != nil {
		return nil, err
	}
	aliPub, err := x509.MarshalPKIXPublicKey(&aliKey.PublicKey)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Fake{
		AppPrivateKey:   payfake.PEM("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(appKey)),
		AlipayPublicKey: payfake.PEM("PUBLIC KEY", aliPub),
		signer:          signer, appPub: &appKey.PublicKey,
		out: &http.Client{Timeout: 10 * time.Second}, ctx: ctx, cancel: cancel,
		trades: map[string]*trade{}, refunds: map[string]*refund{},
		clock: time.Now, bills: map[string]string{},
	}, nil
}

// Set replaces the switches.
func (f *Fake) Set(s Switches) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.switches = s
}

// RefundSends is how many alipay.trade.refund calls carried out_request_no.
func (f *Fake) RefundSends(outRequestNo string) int { return f.sends.Of(outRequestNo) }

// Refunded lists the out_request_no of every refund recorded through the
// gateway (a DashboardRefund is not one: orderflow never asked for it).
func (f *Fake) Refunded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.refunds))
	for no, r := range f.refunds {
		if !r.Dashboard {
			out = append(out, no)
		}
	}
	return out
}

// SetClock makes now the fake's clock for every time it records (payments,
// refunds, notifications) and for which bill days are over; nil is
// time.Now.
func (f *Fake) SetClock(now func() time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if now == nil {
		now = time.Now
	}
	f.clock = now
}

// now is the fake's clock in Beijing time, Alipay's. f.mu is held.
func (f *Fake) now() time.Time { return f.clock().In(beijing) }

// Close stops background callbacks and waits for them.
func (f *Fake) Close() {
	f.cancel()
	f.wg.Wait()
}

func (f *Fake) nextTradeNo() string {
	f.seq++
	return fmt.Sprintf("2026%020d", f.seq)
}

// NotifyTo sends every notification to url instead of the trade's
// notify_url (a test whose API listener was not known when orderflow's
// notify URL setting was made).
func (f *Fake) NotifyTo(url string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notifyOverride = url
}

// TradeNo is Alipay's trade number of an order's trade ("" if none).
func (f *Fake) TradeNo(outTradeNo string) string {
	return payfake.Lookup(&f.mu, f.trades, outTradeNo, func(t *trade) string { return t.TradeNo })
}

// TradeRefunded is what the refunds of out_trade_no returned, in cents.
func (f *Fake) TradeRefunded(outTradeNo string) int64 {
	return payfake.Lookup(&f.mu, f.trades, outTradeNo, func(t *trade) int64 { return t.Refunded })
}
