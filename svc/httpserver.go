package svc

import "net/http"

// HTTPServer is how every listener of orderflow is served: with the
// configured read, write and idle timeouts and header limit, so a client
// that trickles its body or idles on a keep-alive connection is cut off
// instead of holding a connection (and a goroutine) forever.
func (c Config) HTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: c.HTTPReadHeaderTimeout.D(),
		ReadTimeout:       c.HTTPReadTimeout.D(),
		WriteTimeout:      c.HTTPWriteTimeout.D(),
		IdleTimeout:       c.HTTPIdleTimeout.D(),
		MaxHeaderBytes:    c.HTTPMaxHeaderBytes,
	}
}
