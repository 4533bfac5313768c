package wechat

import (
	"fmt"
	"net/http"
	"net/url"
)

// The SDK's service calls build their URLs from its fixed production host,
// so a configured API URL (a sandbox, a proxy, a test's local fake) is
// reached by rewriting the host at the transport. The signature covers only
// the path and query, which stay as they are.
type hostRewrite struct {
	to   *url.URL
	next http.RoundTripper
}

func (h *hostRewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme = h.to.Scheme
	r.URL.Host = h.to.Host
	r.Host = h.to.Host
	return h.next.RoundTrip(r)
}

// apiHost checks that s is scheme://host[:port] and nothing more: a path
// would break the signed request line.
func apiHost(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("ORDERFLOW_WECHAT_API_URL must be scheme://host[:port] without a path")
	}
	return u, nil
}
