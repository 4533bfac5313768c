// Command queue is orderflow's worker: asynq handlers, periodic jobs and the
// outbox poller, with /healthz and /readyz on ORDERFLOW_HTTP_ADDR.
package main

import (
	"context"

	"orderflow/queue/worker"
	"orderflow/svc"

	"go.uber.org/zap"
)

func run(ctx context.Context, _ []string) error {
	sc, err := svc.Boot("queue")
	if err != nil {
		return err
	}
	defer sc.Close()
	w := worker.New(sc, sc.NewUseCases())
	if err := w.Start(); err != nil {
		return err
	}
	sc.Log.Info("queue worker running", zap.String("addr", w.Addr()), zap.Int("concurrency", sc.Config.Concurrency))
	<-ctx.Done()
	sc.Log.Info("queue worker shutting down: finishing running tasks")
	w.Shutdown(context.Background())
	return nil
}

func main() { svc.Main("orderflow queue", run) }
