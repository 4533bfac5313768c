package main

import (
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Params are every knob of one bench run; they are printed with the results
// and written into the JSON so a number can always be traced to its setup.
type Params struct {
	MySQL       string   `json:"mysql"`        // server DSN without a database
	Database    string   `json:"database"`     // the bench's own database (dropped and recreated)
	RedisAddr   string   `json:"redis_addr"`   // shared Redis
	RedisDB     int      `json:"redis_db"`     // preferred DB number (reserved like the tests do)
	Phases      []string `json:"phases"`       // which phases run
	FloorConns  []int    `json:"floor_conns"`  // pool sizes of the raw floor (workers = connections)
	FloorWarmup Duration `json:"floor_warmup"` // discarded start of each floor point
	FloorTime   Duration `json:"floor_time"`   // measured part of each floor point

	Workers     int      `json:"workers"`               // queue worker processes
	Concurrency int      `json:"concurrency"`           // ORDERFLOW_CONCURRENCY of each worker
	DBMaxOpen   int      `json:"db_max_open"`           // ORDERFLOW_DB_MAX_OPEN of each worker
	Clients     int      `json:"clients"`               // closed-loop HTTP clients (each: create, pay, repeat)
	Backlog     int      `json:"backlog"`               // clients wait while this many activations are queued or running
	Users       int      `json:"users"`                 // buyers created through the admin API
	Products    int      `json:"products"`              // card products orders spread over (floor and end to end)
	Warmup      Duration `json:"warmup"`                // closed loop: discarded start
	Steady      Duration `json:"steady"`                // closed loop: measured window
	HalfTime    Duration `json:"half_time"`             // open loop at half the measured maximum
	Pay         string   `json:"pay"`                   // direct (signed POST /payments/notify) or paysim
	CloseOrders int      `json:"close_orders"`          // orders expiring together
	OrderTTL    Duration `json:"order_ttl"`             // ORDERFLOW_ORDER_TTL of the close-phase API
	GroupSize   int      `json:"group_size"`            // participants of the settled group
	GroupLead   Duration `json:"group_lead"`            // deadline distance from the group's creation
	Census      int      `json:"census_orders"`         // orders run through the counting proxies
	RTT         Duration `json:"distance_rtt"`          // distance: the round trip added to MariaDB and Redis (on the answers)
	Preload     int      `json:"preload_orders"`        // growth: finished orders pre-loaded (0: no pre-load, no second closed loop)
	PreloadKeys int      `json:"preload_unsold_keys"`   // growth: unsold keys pre-loaded beside them
	Pending     int      `json:"pending_orders"`        // growth: pending orders the sweep and reconciliation passes walk (0: no passes)
	Extra       []string `json:"extra_env"`             // extra ORDERFLOW_* for every child (experiments)
	GoMaxProcs  int      `json:"gomaxprocs"`            // GOMAXPROCS of the product's processes (0: Go's default)
	JSONPath    string   `json:"json_path"`             // where the JSON goes besides stdout
	WorkDir     string   `json:"work_dir"`              // binaries and child logs
	Profile     string   `json:"profile_dir,omitempty"` // CPU profiles of the closed loop's steady window
	Deadline    Duration `json:"time_budget"`           // the whole run must fit in this
	Drain       Duration `json:"drain_timeout"`         // longest wait for a phase's orders to finish

	// Statements, when set, makes the run the statements bench only
	// (make bench-statements): a day of each of these many lines.
	Statements      intList  `json:"statement_lines,omitempty"`
	StatementsLimit Duration `json:"statement_limit,omitempty"` // the longest a day's run may take
}

// Duration prints as a Go duration in JSON.
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalText writes "20s".
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

func (d *Duration) String() string { return time.Duration(*d).String() }

// Set parses a flag value.
func (d *Duration) Set(s string) error {
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

type intList []int

func (l *intList) String() string {
	parts := make([]string, len(*l))
	for i, n := range *l {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

func (l *intList) Set(s string) error {
	*l = nil
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("want positive integers, got %q", f)
		}
		*l = append(*l, n)
	}
	return nil
}

type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(s string) error {
	*l = nil
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			*l = append(*l, f)
		}
	}
	return nil
}

// allPhases in run order.
var allPhases = []string{"floor", "e2e", "distance", "close", "group", "growth", "census"}

func parseParams(args []string) (Params, error) {
	p := Params{
		MySQL: "root@tcp(127.0.0.1:3306)/", Database: "orderflow_bench",
		RedisAddr: "127.0.0.1:6379", RedisDB: 13,
		Phases:     append([]string(nil), allPhases...),
		FloorConns: []int{8, 32}, FloorWarmup: Duration(time.Second), FloorTime: Duration(8 * time.Second),
		Workers: 1, Concurrency: 40, DBMaxOpen: 32, Clients: 16, Backlog: 64, Users: 256, Products: 1,
		Warmup: Duration(3 * time.Second), Steady: Duration(20 * time.Second), HalfTime: Duration(20 * time.Second),
		Pay: "direct", CloseOrders: 1000, OrderTTL: Duration(10 * time.Second),
		GroupSize: 1000, GroupLead: Duration(6 * time.Second), Census: 300, RTT: Duration(time.Millisecond),
		Preload: 1_000_000, PreloadKeys: 100_000, Pending: 100_000,
		JSONPath: "tmp/bench.json", WorkDir: "tmp/bench",
		Deadline: Duration(10 * time.Minute), Drain: Duration(60 * time.Second),
		StatementsLimit: Duration(60 * time.Second),
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&p.MySQL, "mysql", p.MySQL, "MariaDB/MySQL server DSN (go-sql-driver form, no database)")
	fs.StringVar(&p.Database, "db", p.Database, "the bench's database; DROPPED and recreated (plus <db>_floor)")
	fs.StringVar(&p.RedisAddr, "redis", p.RedisAddr, "Redis address")
	fs.IntVar(&p.RedisDB, "redis-db", p.RedisDB, "preferred Redis DB number 1..15 (reserved like the tests do; another free one if taken)")
	phases := stringList(p.Phases)
	fs.Var(&phases, "phases", "phases to run: "+strings.Join(allPhases, ",")+" (default), or also "+galeraPhase+" (make bench-ha)")
	conns := intList(p.FloorConns)
	fs.Var(&conns, "floor-conns", "raw floor pool sizes (workers = connections)")
	fs.Var(&p.FloorWarmup, "floor-warmup", "raw floor: discarded start of each point")
	fs.Var(&p.FloorTime, "floor-time", "raw floor: measured time of each point")
	fs.IntVar(&p.Workers, "workers", p.Workers, "queue worker processes, 1..4 (on one small box one process is the deployment: two on the same cores halve its batches and cost 25–45 % more CPU per order; see docs/performance.md)")
	fs.IntVar(&p.Concurrency, "concurrency", p.Concurrency, "ORDERFLOW_CONCURRENCY of each worker (default 40: the in-flight activations two workers at the product default of 20 allowed, in one process)")
	fs.IntVar(&p.DBMaxOpen, "db-max-open", p.DBMaxOpen, "ORDERFLOW_DB_MAX_OPEN of each worker")
	fs.IntVar(&p.Clients, "clients", p.Clients, "closed-loop HTTP clients")
	fs.IntVar(&p.Backlog, "backlog", p.Backlog, "closed loop: clients wait while this many activations are queued or running")
	fs.IntVar(&p.Users, "users", p.Users, "buyers created through the admin API")
	fs.IntVar(&p.Products, "products", p.Products, "card products the orders spread over, in the floor and end to end (1: every order contends for the same product's keys)")
	fs.Var(&p.Warmup, "warmup", "closed loop: discarded start")
	fs.Var(&p.Steady, "steady", "closed loop: measured window")
	fs.Var(&p.HalfTime, "half-time", "open loop at 50% of the measured maximum: duration")
	fs.StringVar(&p.Pay, "pay", p.Pay, "how orders are paid: direct (signed POST /api/v1/payments/notify) or paysim (the simulator sends it)")
	fs.IntVar(&p.CloseOrders, "close-orders", p.CloseOrders, "orders created to expire in the same second")
	fs.Var(&p.OrderTTL, "order-ttl", "ORDERFLOW_ORDER_TTL of the close-phase API")
	fs.IntVar(&p.GroupSize, "group-size", p.GroupSize, "participants of the settled group")
	fs.Var(&p.GroupLead, "group-lead", "group deadline distance from its creation (joins must fit before it)")
	fs.IntVar(&p.Census, "census-orders", p.Census, "orders run through the counting proxies (round trips per order)")
	fs.Var(&p.RTT, "rtt", "distance: the round trip the bench's delaying proxies add to MariaDB and Redis (they hold each answer that long)")
	fs.IntVar(&p.Preload, "preload", p.Preload, "growth: finished orders pre-loaded into the ledger (with their events, payments, effects, stock flows and keys) before the closed loop runs again; 0 skips both")
	fs.IntVar(&p.PreloadKeys, "preload-keys", p.PreloadKeys, "growth: unsold card keys pre-loaded beside them")
	fs.IntVar(&p.Pending, "pending", p.Pending, "growth: pending orders one sweep pass and one reconciliation pass walk (timed; deleted afterwards); 0 skips the passes")
	extra := stringList(nil)
	fs.Var(&extra, "env", "extra KEY=VALUE settings for every child process, comma-separated (experiments only)")
	fs.IntVar(&p.GoMaxProcs, "gomaxprocs", -1, "GOMAXPROCS of the API and worker processes: -1 shares the CPUs among them (CPUs ÷ processes, at least 1), 0 leaves Go's default (every CPU each); the bench itself keeps the default")
	fs.StringVar(&p.JSONPath, "json", p.JSONPath, "also write the JSON here")
	fs.StringVar(&p.WorkDir, "work", p.WorkDir, "directory for binaries and child logs")
	fs.StringVar(&p.Profile, "profile", p.Profile, "write CPU profiles of the API, the workers and the bench over the closed loops' steady windows (loopback and at a distance) into this directory")
	fs.Var(&p.Deadline, "budget", "time budget of the whole run")
	fs.Var(&p.Drain, "drain", "longest wait for a phase's orders to finish")
	fs.Var(&p.Statements, "statements", "run only the statements bench: a paysim statement day of each of these many lines, reconciled in-process (make bench-statements)")
	fs.Var(&p.StatementsLimit, "statements-limit", "statements bench: the longest one day's run may take (longer fails the bench)")
	if err := fs.Parse(args); err != nil {
		return p, err
	}
	p.Phases, p.FloorConns, p.Extra = phases, conns, extra
	if p.GoMaxProcs < 0 {
		p.GoMaxProcs = sharedProcs(runtime.NumCPU(), p.Workers+1)
	}
	for _, ph := range p.Phases {
		if !contains(allPhases, ph) && ph != galeraPhase {
			return p, fmt.Errorf("-phases: unknown phase %q", ph)
		}
	}
	switch {
	case p.Workers < 1 || p.Workers > 4:
		return p, fmt.Errorf("-workers: want 1..4")
	case p.Pay != "direct" && p.Pay != "paysim":
		return p, fmt.Errorf("-pay: want direct or paysim")
	case p.RTT < 0 || p.RTT.D() > time.Second:
		return p, fmt.Errorf("-rtt: want 0..1s")
	case p.Preload < 0 || p.PreloadKeys < 0 || p.Pending < 0:
		return p, fmt.Errorf("-preload, -preload-keys and -pending must not be negative")
	case p.Clients < 1 || p.Backlog < 1 || p.Users < 1 || p.Products < 1:
		return p, fmt.Errorf("-clients, -backlog, -users and -products must be positive")
	case p.Database == "" || strings.ContainsAny(p.Database, "`'\" ;"):
		return p, fmt.Errorf("-db: want a plain database name")
	case p.RedisDB < 1 || p.RedisDB > 15:
		return p, fmt.Errorf("-redis-db: want 1..15 (DB 0 belongs to the running system)")
	}
	for _, kv := range p.Extra {
		if !strings.HasPrefix(kv, "ORDERFLOW_") || !strings.Contains(kv, "=") {
			return p, fmt.Errorf("-env: want ORDERFLOW_KEY=VALUE, got %q", kv)
		}
	}
	return p, nil
}

// sharedProcs is each product process's share of the CPUs. The product's
// processes share the machine with each other and with MariaDB and Redis;
// each with GOMAXPROCS = every CPU, their schedulers spin for work the
// others need (on 2 CPUs: ~20 % less CPU per order with 1, README
// "Performance").
func sharedProcs(cpus, processes int) int { return max(1, cpus/processes) }

func (p Params) runs(phase string) bool { return contains(p.Phases, phase) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
