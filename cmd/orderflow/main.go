// Command orderflow runs the whole system in one process with nothing
// installed (the ledger in SQLite, an embedded Redis-compatible server):
//
//	orderflow dev    API, worker, scheduler, dashboard and payment simulator
//	orderflow demo   a fresh dev system, a short story driven through it, then exit
//
// Production runs the api, queue and paysim binaries on MySQL/MariaDB and Redis.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"orderflow/internal/devmode"
	"orderflow/svc"
)

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("want a command: dev or demo")
	}
	switch args[0] {
	case "dev":
		return runDev(ctx, args[1:])
	case "demo":
		return runDemo(ctx, args[1:])
	default:
		return fmt.Errorf("unknown command %q (want: dev or demo)", args[0])
	}
}

func main() { svc.Main("orderflow", run) }

func runDev(ctx context.Context, args []string) error {
	opt := devmode.DefaultOptions()
	fs := flag.NewFlagSet("orderflow dev", flag.ContinueOnError)
	fs.StringVar(&opt.DataDir, "data", envOr("ORDERFLOW_DEV_DATA", opt.DataDir), "data directory: the SQLite ledger and the remembered tokens (ORDERFLOW_DEV_DATA)")
	fs.StringVar(&opt.APIAddr, "api", envOr("ORDERFLOW_API_ADDR", opt.APIAddr), "API and dashboard listen address (ORDERFLOW_API_ADDR)")
	fs.StringVar(&opt.WorkerAddr, "worker", envOr("ORDERFLOW_QUEUE_ADDR", opt.WorkerAddr), "worker health/metrics listen address (ORDERFLOW_QUEUE_ADDR)")
	fs.StringVar(&opt.PaysimAddr, "paysim", envOr("ORDERFLOW_PAYSIM_ADDR", opt.PaysimAddr), "payment simulator listen address (ORDERFLOW_PAYSIM_ADDR)")
	fs.StringVar(&opt.RedisAddr, "redis", envOr("ORDERFLOW_DEV_REDIS_ADDR", opt.RedisAddr), "embedded Redis listen address (ORDERFLOW_DEV_REDIS_ADDR)")
	fs.BoolVar(&opt.NoSeed, "no-seed", false, "start a new ledger empty instead of with the demo catalogue")
	if err := fs.Parse(args); err != nil {
		return err
	}
	sys, err := devmode.Start(ctx, opt)
	if err != nil {
		return err
	}
	printBanner(sys)
	<-ctx.Done()
	fmt.Println("\norderflow dev: stopping (running tasks finish; the ledger stays in " + sys.DBPath + ")")
	sctx, cancel := context.WithTimeout(context.Background(), sys.Config.ShutdownTimeout.D())
	defer cancel()
	sys.Close(sctx)
	return nil
}

func printBanner(s *devmode.System) {
	state := "a new ledger"
	if s.Restarted {
		state = "the ledger from the last run (reconciliation re-creates the tasks Redis lost)"
	}
	fmt.Printf(`
orderflow dev is up: %s
  API           %s   (readyz: /readyz, metrics: /metrics)
  console       %s/console/  (log in with the admin token)
  dashboard     %s/monitoring/  (user: anything, password: the admin token)
  worker        %s   (readyz: /readyz)
  pay simulator %s
  admin token   %s
  ledger        %s (SQLite)   redis: %s (embedded, in memory)
`, state, s.APIURL, s.APIURL, s.APIURL, s.WorkerURL, s.PaysimURL, s.AdminToken, s.DBPath, s.RedisAddr)
	if c := s.Seeded; c != nil {
		fmt.Printf(`  demo catalogue: card product %d (%d keys), subscription %d, recharge %d,
                  buyer %d (token %s), group-buy %s
`, c.CardProductID, 20, c.SubscriptionProductID, c.RechargeProductID, c.BuyerID, c.BuyerToken, c.GroupNo)
	}
	fmt.Println("Press Ctrl-C to stop.")
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func runDemo(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("orderflow demo", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	data, err := os.MkdirTemp("", "orderflow-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(data)
	opt := devmode.DefaultOptions()
	opt.DataDir = data
	opt.APIAddr, opt.WorkerAddr, opt.PaysimAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	opt.Environ = append(os.Environ(), "ORDERFLOW_ORDER_TTL="+devmode.DemoOrderTTL.String(), "ORDERFLOW_LOG_LEVEL=error")
	sys, err := devmode.Start(ctx, opt)
	if err != nil {
		return err
	}
	defer sys.Close(context.Background())
	fmt.Printf("orderflow demo: a fresh system (SQLite ledger, embedded Redis) at %s; orders wait %v for payment\n\n",
		sys.APIURL, devmode.DemoOrderTTL)
	began := time.Now()
	if err := devmode.RunDemo(ctx, sys, os.Stdout); err != nil {
		return err
	}
	fmt.Printf("\nThe story took %v. `go run ./cmd/orderflow dev` keeps a system running to try it yourself.\n", time.Since(began).Round(100*time.Millisecond))
	return nil
}
