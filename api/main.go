// Command api is orderflow's HTTP API. `api migrate` applies pending schema
// migrations and exits.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"orderflow/api/handler"
	"orderflow/model"
	"orderflow/svc"

	"go.uber.org/zap"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "orderflow api:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	migrate := len(args) > 0 && args[0] == "migrate"
	if migrate {
		if err := svc.EnsureDatabase("api"); err != nil {
			return err
		}
	}
	sc, err := svc.Boot("api")
	if err != nil {
		return err
	}
	defer sc.Close()
	if migrate {
		n, err := model.Migrate(context.Background(), sc.DB)
		if err != nil {
			return err
		}
		sc.Log.Info("migrations applied", zap.Int("applied", n))
		return nil
	}
	if len(args) > 0 {
		return fmt.Errorf("unknown command %q (want: migrate, or nothing to serve)", args[0])
	}
	ln, err := net.Listen("tcp", sc.Config.HTTPAddr)
	if err != nil {
		return fmt.Errorf("setting ORDERFLOW_HTTP_ADDR: %w", err)
	}
	uc := sc.NewUseCases()
	srv := sc.Config.HTTPServer(handler.NewRouter(sc, uc))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	sc.Log.Info("api listening", zap.String("addr", ln.Addr().String()))
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sc.Log.Info("api shutting down: draining in-flight requests")
	sctx, cancel := context.WithTimeout(context.Background(), sc.Config.ShutdownTimeout.D())
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := uc.Relay.Flush(sctx); err != nil {
		sc.Log.Warn("outbox deletes not flushed; the poller drops those rows", zap.Error(err))
	}
	return nil
}
