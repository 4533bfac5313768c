// Command api is orderflow's HTTP API. `api migrate` applies pending schema
// migrations and exits.
package main

import (
	"context"
	"fmt"
	"net"

	"orderflow/api/handler"
	"orderflow/svc"

	"go.uber.org/zap"
)

func run(ctx context.Context, args []string) error {
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
		n, err := sc.Migrate(ctx)
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
	if addr := sc.Config.MetricsAddr; addr != "" {
		// /metrics on a listener of its own, which the shop need not expose.
		mln, err := net.Listen("tcp", addr)
		if err != nil {
			_ = ln.Close()
			return fmt.Errorf("setting ORDERFLOW_METRICS_ADDR: %w", err)
		}
		msrv := sc.Config.HTTPServer(handler.MetricsRouter(sc, uc))
		go func() {
			if err := svc.Serve(ctx, sc.Log, "api metrics", msrv, mln, sc.Config.ShutdownTimeout.D()); err != nil {
				sc.Log.Error("metrics listener stopped", zap.Error(err))
			}
		}()
	}
	srv := sc.Config.HTTPServer(handler.NewRouter(sc, uc))
	if err := svc.Serve(ctx, sc.Log, "api", srv, ln, sc.Config.ShutdownTimeout.D()); err != nil {
		return err
	}
	fctx, cancel := context.WithTimeout(context.Background(), sc.Config.ShutdownTimeout.D())
	defer cancel()
	if err := uc.Relay.Flush(fctx); err != nil {
		sc.Log.Warn("outbox deletes not flushed; the poller drops those rows", zap.Error(err))
	}
	return nil
}

func main() { svc.Main("orderflow api", run) }
