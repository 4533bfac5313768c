// Command chaos runs the chaos suite: orderflow as separate processes on a
// private MariaDB and Redis, a mixed workload, faults on a seeded schedule,
// then heal, quiescence, each provider's statement of the day (with
// differences planted on purpose) and a full ledger audit. It prints a report and
// exits 1 on any violation or if quiescence is not reached (2 if the run
// could not be set up).
//
//	go run ./cmd/chaos -seed 42            # full: about 4-5 minutes
//	go run ./cmd/chaos -seed 7 -short      # fast tier: under 2 minutes
//	go run ./cmd/chaos -seed 1 -ha         # Galera + Sentinel (make test-ha)
//	go run ./cmd/chaos -seed 42 -provider alipay  # buyers pay through the Alipay fake
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"orderflow/tests/chaos"
)

func main() {
	os.Exit(run())
}

func run() int {
	var cfg chaos.Config
	flag.Int64Var(&cfg.Seed, "seed", 1, "seed of the fault schedule and the workload")
	flag.DurationVar(&cfg.Duration, "duration", 0, "workload duration (default 150s, or 40s with -short)")
	flag.BoolVar(&cfg.Short, "short", false, "fast-tier run: under two minutes, every fault kind once")
	flag.IntVar(&cfg.Workers, "workers", 0, "queue worker processes (default 3, or 2 with -short)")
	flag.IntVar(&cfg.Clients, "clients", 0, "concurrent workload clients (default 8, or 6 with -short)")
	flag.StringVar(&cfg.BinDir, "bin", "", "directory with prebuilt api, queue and paysim binaries (default: build them)")
	flag.StringVar(&cfg.WorkDir, "dir", "", "directory for process logs (default: a temporary one, removed after a pass)")
	flag.BoolVar(&cfg.Keep, "keep", false, "keep logs and the MariaDB data directory")
	flag.BoolVar(&cfg.HA, "ha", false, "run on a 3-node Galera cluster and Redis Sentinel, with their faults (make test-ha)")
	flag.StringVar(&cfg.Provider, "provider", chaos.ProviderPaysim, "how buyers pay: paysim (the simulator) or alipay (the Alipay fake's real wire format, some notifications lost; make chaos PROVIDER=alipay)")
	flag.Parse()
	cfg.Out = os.Stdout

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	rep, err := chaos.Run(ctx, cfg)
	if rep != nil {
		rep.Print(os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 2
	}
	fmt.Printf("chaos run took %s\n", time.Since(start).Round(time.Second))
	if !rep.Pass() {
		return 1
	}
	return 0
}
