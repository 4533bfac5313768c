// Command audit checks an orderflow ledger at rest and prints one row per
// rule: how many objects it checked, how many violations it found, and a
// few examples. It exits 1 on any violation and 2 when it cannot run.
//
//	go run ./cmd/audit -dsn 'root@tcp(127.0.0.1:3306)/orderflow' \
//	    [-redis 127.0.0.1:6379 -redis-db 0] [-paysim http://127.0.0.1:8090] \
//	    [-grace 15m] [-in-flight 0]
//
// Without -redis the stock-counter rule is skipped; without -paysim the
// provider-refund rule is. Run it when the system is quiescent (or give
// -in-flight to tolerate objects moved that recently).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"orderflow/internal/audit"

	"github.com/redis/go-redis/v9"
)

func main() {
	os.Exit(run())
}

func run() int {
	var (
		dsn      = flag.String("dsn", os.Getenv("ORDERFLOW_MYSQL_DSN"), "ledger DSN, go-sql-driver form (default $ORDERFLOW_MYSQL_DSN)")
		redisAdr = flag.String("redis", "", "Redis address holding the stock counters (empty: skip the stock-counter rule)")
		redisDB  = flag.Int("redis-db", 0, "Redis DB number")
		sim      = flag.String("paysim", "", "payment simulator base URL for provider refund counts (empty: skip)")
		grace    = flag.Duration("grace", 15*time.Minute, "how long past expiry a pending order (past deadline an open group) may wait")
		inFlight = flag.Duration("in-flight", 0, "tolerate in-flight objects moved more recently than this (0: ledger at rest)")
		timeout  = flag.Duration("timeout", 2*time.Minute, "give up after this long")
	)
	flag.Parse()
	if *dsn == "" {
		fmt.Fprintln(os.Stderr, "audit: -dsn is required")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	db, err := audit.Open(*dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, "audit:", err)
		return 2
	}
	defer db.Close()
	opt := audit.Options{DB: db, Grace: *grace, InFlightGrace: *inFlight}
	if *redisAdr != "" {
		rdb := redis.NewClient(&redis.Options{Addr: *redisAdr, DB: *redisDB})
		defer rdb.Close()
		opt.Redis = rdb
	}
	if *sim != "" {
		if opt.Provider, err = audit.FetchProvider(ctx, *sim); err != nil {
			fmt.Fprintln(os.Stderr, "audit:", err)
			return 2
		}
	}
	rep, err := audit.Run(ctx, opt)
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // already "audit: …"
		return 2
	}
	fmt.Printf("orderflow ledger audit at %s\n", rep.At.Format(time.RFC3339))
	rep.Print(os.Stdout)
	if rep.Failed() {
		return 1
	}
	return 0
}
