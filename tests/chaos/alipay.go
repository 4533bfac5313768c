package chaos

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"orderflow/internal/audit"
	"orderflow/internal/infra/pay"
	fake "orderflow/internal/payfake/alipay"
	"orderflow/internal/paysim"
)

// Providers a run can take its buyers' money through (Config.Provider).
const (
	ProviderPaysim = pay.NamePaysim
	ProviderAlipay = pay.NameAlipay
)

// alipayTimeouts is how many alipay.trade.refund calls the fake records and
// then never answers, so orderflow's refund path must query before any
// re-send (the fake counts the calls per out_request_no).
const alipayTimeouts = 4

// alipayRig is the Alipay fake (in-process, real wire format, RSA2 with its
// own test keys) behind a cuttable proxy, and a relay that carries its
// notifications to the APIs: the relay spreads them over both APIs (so an
// API kill looks like Alipay meeting a dead node and trying again) and drops
// the ones the workload marks lost, and a share of the refund callbacks, so
// the query paths have something to recover.
type alipayRig struct {
	fake    *fake.Fake
	gw      *http.Server
	gwPort  int
	proxy   *proxy // what orderflow uses to reach the gateway; cut with the simulator's
	relay   *http.Server
	relayLn net.Listener
	apiURLs []string
	keyFile string
	client  *http.Client

	// lost holds out_trade_nos whose payment notifications are dropped
	// until the workload, playing Alipay's later retry, sends them again.
	lost sync.Map
	next atomic.Int64

	payDropped, refundDropped, relayed atomic.Int64
}

// AlipayStats are the Alipay run's own figures.
type AlipayStats struct {
	// Checkouts counts orders checked out at Alipay (a precreated trade).
	Checkouts int
	// Paid counts orders the fake made paid; Lost the ones whose
	// notification the workload had dropped (found by query, or taken by
	// the later re-send).
	Paid, Lost int
	// PayNotifyDropped and RefundNotifyDropped count the notifications the
	// relay dropped; Relayed the ones it carried to an API.
	PayNotifyDropped, RefundNotifyDropped, Relayed int64
	// Refunds counts refunds the fake recorded (one per out_request_no);
	// RefundCalls the alipay.trade.refund calls; MaxSends the most calls one
	// out_request_no got; TimedOut the calls left unanswered on purpose.
	Refunds, RefundCalls, MaxSends, TimedOut int
}

// startAlipay starts the fake's gateway, its proxy and the notification
// relay, and returns the settings that enable Alipay in every process.
func startAlipay(dir string, port func() int, apiURLs []string) (*alipayRig, []string, error) {
	f, err := fake.New()
	if err != nil {
		return nil, nil, err
	}
	a := &alipayRig{fake: f, apiURLs: apiURLs, gwPort: port(),
		client: &http.Client{Timeout: 5 * time.Second}}
	f.Set(fake.Switches{TimeoutRefunds: alipayTimeouts})
	a.keyFile = filepath.Join(dir, "alipay-app.pem")
	if err := os.WriteFile(a.keyFile, []byte(f.AppPrivateKey), 0o600); err != nil {
		return a, nil, err
	}
	gln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(a.gwPort))
	if err != nil {
		return a, nil, err
	}
	a.gw = &http.Server{Handler: f.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = a.gw.Serve(gln) }()
	a.proxy = newProxy(port(), gln.Addr().String())
	if err := a.proxy.Restore(); err != nil {
		return a, nil, err
	}
	if a.relayLn, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port())); err != nil {
		return a, nil, err
	}
	a.relay = &http.Server{Handler: http.HandlerFunc(a.forward), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = a.relay.Serve(a.relayLn) }()
	env := []string{
		"ORDERFLOW_PAY_PROVIDERS=paysim,alipay",
		"ORDERFLOW_CURRENCY=cny",
		"ORDERFLOW_ALIPAY_APP_ID=" + fake.AppID,
		"ORDERFLOW_ALIPAY_PRIVATE_KEY=@" + a.keyFile,
		"ORDERFLOW_ALIPAY_PUBLIC_KEY=" + f.AlipayPublicKey,
		"ORDERFLOW_ALIPAY_GATEWAY_URL=http://" + a.proxy.Addr() + "/gateway.do",
		"ORDERFLOW_ALIPAY_NOTIFY_URL=http://" + a.relayLn.Addr().String() + "/api/v1/payments/alipay/notify",
		// Asked about soon after checkout: a lost notification is found
		// within a sweep or two, well inside the orders' lives.
		"ORDERFLOW_PAY_QUERY_AFTER=2s",
	}
	return a, env, nil
}

// forward carries one notification to an API, unless it is dropped: a
// payment of an order the workload marked lost, or every third refund
// callback (by out_request_no, all of its tries), which the refund
// worker's query then confirms.
func (a *alipayRig) forward(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	if err != nil {
		http.Error(w, "read", http.StatusBadGateway)
		return
	}
	v, _ := url.ParseQuery(string(body))
	if refundNo := v.Get("out_biz_no"); refundNo != "" {
		if hashOf(refundNo)%3 == 0 {
			a.refundDropped.Add(1)
			_, _ = io.WriteString(w, "dropped")
			return
		}
	} else if _, lost := a.lost.Load(v.Get("out_trade_no")); lost {
		a.payDropped.Add(1)
		_, _ = io.WriteString(w, "dropped")
		return
	}
	api := a.apiURLs[int(a.next.Add(1))%len(a.apiURLs)]
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, api+r.URL.Path, strings.NewReader(string(body)))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header.Set("Content-Type", r.Header.Get("Content-Type"))
	resp, err := a.client.Do(req)
	if err != nil {
		http.Error(w, "api unreachable", http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	a.relayed.Add(1)
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(out)
}

// hashOf is FNV-1a: a stable, seed-free choice of which callbacks to drop.
func hashOf(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// stop ends the relay, the gateway and the fake's background callbacks.
func (a *alipayRig) stop() {
	if a.relay != nil {
		_ = a.relay.Close()
	}
	if a.proxy != nil {
		a.proxy.Cut()
	}
	if a.gw != nil {
		_ = a.gw.Close()
	}
	a.fake.Close()
}

// refunds is the fake's view of refunds in the audit's terms: one
// execution per recorded out_request_no (the fake, like Alipay, moves money
// once per out_request_no whatever the calls), status succeeded.
func (a *alipayRig) refunds() map[string]audit.ProviderRefund {
	out := map[string]audit.ProviderRefund{}
	for _, no := range a.fake.Refunded() {
		out[no] = audit.ProviderRefund{Executed: 1, Status: paysim.StatusSucceeded}
	}
	return out
}

// providerRefunds is every provider's refunds for the audit: the
// simulator's and, in an Alipay run, the fake's. A refund number known to
// both moved money twice, and counts so.
func (c *cluster) providerRefunds(ctx context.Context) (map[string]audit.ProviderRefund, error) {
	out, err := audit.FetchProvider(ctx, c.simURL)
	if err != nil {
		return nil, err
	}
	if c.ali == nil {
		return out, nil
	}
	for no, r := range c.ali.refunds() {
		if prev, ok := out[no]; ok {
			r.Executed += prev.Executed
		}
		out[no] = r
	}
	return out, nil
}

// stats reads the Alipay figures; refundNos are the ledger's refunds at
// Alipay, whose call counts it sums.
func (a *alipayRig) stats(refundNos []string) AlipayStats {
	s := AlipayStats{PayNotifyDropped: a.payDropped.Load(), RefundNotifyDropped: a.refundDropped.Load(),
		Relayed: a.relayed.Load(), Refunds: len(a.fake.Refunded()), TimedOut: alipayTimeouts}
	for _, no := range refundNos {
		n := a.fake.RefundSends(no)
		s.RefundCalls += n
		s.MaxSends = max(s.MaxSends, n)
	}
	return s
}
