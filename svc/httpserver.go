package svc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"
)

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

// Serve serves srv on ln until ctx ends, then shuts it down, giving the
// requests in flight up to grace to finish. It logs "<name> listening" with
// the bound address (the line scripts and tests wait for) and "<name>
// shutting down". A listener that stops on its own
// is an error at once: the process must not look alive without its port.
func Serve(ctx context.Context, log *zap.Logger, name string, srv *http.Server, ln net.Listener, grace time.Duration) error {
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info(name+" listening", zap.String("addr", ln.Addr().String()))
	select {
	case err := <-served:
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	log.Info(name+" shutting down: draining in-flight requests", zap.Duration("grace", grace))
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown %s: %w", ln.Addr(), err)
	}
	return nil
}
