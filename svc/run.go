package svc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.uber.org/zap"
)

// Main is every long-running binary's main: run gets the command-line
// arguments and a context that ends at SIGTERM or SIGINT (the stop request
// of a supervisor or a terminal); its error becomes one line "<name>: <err>"
// on stderr and exit status 1.
func Main(name string, run func(ctx context.Context, args []string) error) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
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
