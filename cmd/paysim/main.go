// Command paysim runs the payment-provider simulator as its own process, for
// the demo and for tests that drive orderflow from outside.
//
// Settings come from flags, each defaulting to an environment variable:
//
//	-addr            ORDERFLOW_PAYSIM_ADDR            listen address (127.0.0.1:8090)
//	                 ORDERFLOW_PAY_SECRET             shared HMAC secret (required; env only)
//	-api             ORDERFLOW_API_URL                orderflow API base (http://127.0.0.1:8080)
//	-fail-rate       ORDERFLOW_PAYSIM_FAIL_RATE       share of refund calls answered 500
//	-timeout-rate    ORDERFLOW_PAYSIM_TIMEOUT_RATE    share of refund calls that hang, then 504
//	-timeout-delay   ORDERFLOW_PAYSIM_TIMEOUT_DELAY   how long a timeout hangs (3s)
//	-delay           ORDERFLOW_PAYSIM_DELAY           latency added to every refund call
//	-callback-delay  ORDERFLOW_PAYSIM_CALLBACK_DELAY  time a refund stays processing (0: succeed at once)
//	-seed            ORDERFLOW_PAYSIM_SEED            fault-injection seed (0: from the clock)
//
// The /admin routes are unsigned, so keep the listener on loopback. Besides
// /admin/pay and /admin/config they drive the statement (internal/paysim
// statement_admin.go): the clock, dropped and altered lines, synthetic days,
// dashboard refunds and payments orderflow never hears of.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"orderflow/internal/paysim"
	"orderflow/svc"

	"go.uber.org/zap"
)

func run(ctx context.Context, args []string) error {
	var (
		fs  = flag.NewFlagSet("paysim", flag.ContinueOnError)
		cfg paysim.Config
		bad error
	)
	// envOr reads a default from the environment, keeping the first parse
	// error so start-up stops with one line naming the variable.
	envOr := func(key string, parse func(string) error) {
		if v, ok := os.LookupEnv(key); ok && bad == nil {
			if err := parse(v); err != nil {
				bad = fmt.Errorf("%s=%q: %w", key, v, err)
			}
		}
	}
	addr := "127.0.0.1:8090"
	api := "http://127.0.0.1:8080"
	envOr("ORDERFLOW_PAYSIM_ADDR", func(v string) error { addr = v; return nil })
	envOr("ORDERFLOW_API_URL", func(v string) error { api = v; return nil })
	envOr("ORDERFLOW_PAYSIM_FAIL_RATE", parseRate(&cfg.FailRate))
	envOr("ORDERFLOW_PAYSIM_TIMEOUT_RATE", parseRate(&cfg.TimeoutRate))
	envOr("ORDERFLOW_PAYSIM_TIMEOUT_DELAY", parseDuration(&cfg.TimeoutDelay))
	envOr("ORDERFLOW_PAYSIM_DELAY", parseDuration(&cfg.Delay))
	envOr("ORDERFLOW_PAYSIM_CALLBACK_DELAY", parseDuration(&cfg.CallbackDelay))
	envOr("ORDERFLOW_PAYSIM_SEED", func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		cfg.Seed = n
		return err
	})
	if bad != nil {
		return bad
	}

	fs.StringVar(&addr, "addr", addr, "listen address (ORDERFLOW_PAYSIM_ADDR)")
	fs.StringVar(&api, "api", api, "orderflow API base URL (ORDERFLOW_API_URL)")
	fs.Float64Var(&cfg.FailRate, "fail-rate", cfg.FailRate, "share of refund calls answered 500 (ORDERFLOW_PAYSIM_FAIL_RATE)")
	fs.Float64Var(&cfg.TimeoutRate, "timeout-rate", cfg.TimeoutRate, "share of refund calls that hang, then 504 (ORDERFLOW_PAYSIM_TIMEOUT_RATE)")
	fs.DurationVar(&cfg.TimeoutDelay, "timeout-delay", cfg.TimeoutDelay, "how long an injected timeout hangs (ORDERFLOW_PAYSIM_TIMEOUT_DELAY)")
	fs.DurationVar(&cfg.Delay, "delay", cfg.Delay, "latency added to every refund call (ORDERFLOW_PAYSIM_DELAY)")
	fs.DurationVar(&cfg.CallbackDelay, "callback-delay", cfg.CallbackDelay, "time a refund stays processing (ORDERFLOW_PAYSIM_CALLBACK_DELAY)")
	fs.Int64Var(&cfg.Seed, "seed", cfg.Seed, "fault-injection seed, 0 for random (ORDERFLOW_PAYSIM_SEED)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	for name, r := range map[string]float64{"fail-rate": cfg.FailRate, "timeout-rate": cfg.TimeoutRate} {
		if !(r >= 0 && r <= 1) {
			return fmt.Errorf("%s %v: must be between 0 and 1", name, r)
		}
	}

	// The secret is read from the environment only: a flag would show it in ps.
	cfg.Secret = os.Getenv("ORDERFLOW_PAY_SECRET")
	if cfg.Secret == "" {
		return errors.New("ORDERFLOW_PAY_SECRET is required")
	}
	cfg.NotifyBaseURL = api

	log, err := zap.NewProduction()
	if err != nil {
		return fmt.Errorf("start logger: %w", err)
	}
	defer func() { _ = log.Sync() }()
	cfg.Logger = log

	// Listen before logging so the line names the real address (port 0 works).
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("ORDERFLOW_PAYSIM_ADDR %s: %w", addr, err)
	}
	sim := paysim.New(cfg)
	defer sim.Close()
	srv := svc.Defaults().HTTPServer(sim.Handler()) // the simulator keeps the product's default limits
	// In-flight calls include injected hangs, so allow more than one timeout delay.
	return svc.Serve(ctx, log.With(zap.String("api", api)), "paysim", srv, ln, 15*time.Second)
}

func main() { svc.Main("paysim", run) }

func parseRate(dst *float64) func(string) error {
	return func(v string) error {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return err
		}
		if !(r >= 0 && r <= 1) {
			return errors.New("must be between 0 and 1")
		}
		*dst = r
		return nil
	}
}

func parseDuration(dst *time.Duration) func(string) error {
	return func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			return err
		}
		if d < 0 {
			return errors.New("must not be negative")
		}
		*dst = d
		return nil
	}
}
