package testenv

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"orderflow/api/handler"
	"orderflow/internal/paysim"
	"orderflow/queue/worker"
	"orderflow/svc"

	"go.uber.org/zap"
)

// Stack is the whole system in-process on real ports: API, worker and the
// payment simulator, on the test's own database and Redis DB.
type Stack struct {
	Config svc.Config
	SC     *svc.ServiceContext
	UC     *svc.UseCases
	APIURL string
	Worker *worker.Worker
	Sim    *paysim.Sim
	SimURL string
	Pay    *paysim.Client
	Admin  *Client
	api    *http.Server
}

// Backend is where a stack keeps its ledger and its queues.
type Backend int

const (
	// Shared is production's kind: a database on the shared MariaDB and a
	// DB number on the shared Redis.
	Shared Backend = iota
	// Embedded is the dev mode's: a SQLite file and an in-process Redis.
	Embedded
)

// EachBackend runs test as a subtest on each backend (named after it), for
// the paths whose SQL differs between MariaDB and SQLite.
func EachBackend(t *testing.T, test func(t *testing.T, backend Backend)) {
	for _, b := range []Backend{Shared, Embedded} {
		t.Run(b.String(), func(t *testing.T) { test(t, b) })
	}
}

func (b Backend) String() string {
	if b == Embedded {
		return "embedded"
	}
	return "mariadb"
}

// Options tune a stack before it starts.
type Options struct {
	// Backend picks the databases (Shared unless set).
	Backend Backend
	// Configure edits the configuration.
	Configure func(*svc.Config)
	// NoWorker starts the API and simulator only (the test runs workers itself).
	NoWorker bool
}

// Start boots a stack and stops it when the test ends. With a worker it
// returns once the start-up reconciliation has completed, so a test's first
// orders never race its stock-counter rebuild.
func Start(t testing.TB, opt Options) *Stack {
	t.Helper()
	var cfg svc.Config
	if opt.Backend == Embedded {
		cfg = EmbeddedConfig(t)
	} else {
		cfg = Config(t)
	}
	if opt.Configure != nil {
		opt.Configure(&cfg)
	}
	return StartWith(t, cfg, opt)
}

// StartWith boots a stack on a given configuration.
func StartWith(t testing.TB, cfg svc.Config, opt Options) *Stack {
	t.Helper()
	apiLn, simLn := listen(t), listen(t)
	cfg.PayURL = "http://" + simLn.Addr().String()
	log, err := svc.NewLogger(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := svc.New(cfg, log)
	if err != nil {
		t.Fatalf("testenv: service context: %v", err)
	}
	s := &Stack{Config: cfg, SC: sc, UC: sc.NewUseCases()}
	s.APIURL = "http://" + apiLn.Addr().String()
	failOnViolations(t, apiLn.Addr().String())
	s.api = cfg.HTTPServer(handler.NewRouter(sc, s.UC))
	go func() { _ = s.api.Serve(apiLn) }()

	s.Sim = paysim.New(paysim.Config{Secret: cfg.PaySecret, NotifyBaseURL: s.APIURL, Seed: 1, Logger: zap.NewNop()})
	s.SimURL = cfg.PayURL
	simSrv := cfg.HTTPServer(s.Sim.Handler())
	go func() { _ = simSrv.Serve(simLn) }()
	s.Pay = &paysim.Client{BaseURL: s.SimURL, Secret: cfg.PaySecret, HTTP: &http.Client{Timeout: 30 * time.Second}}
	s.Admin = &Client{Base: s.APIURL, Token: cfg.AdminToken}

	if !opt.NoWorker {
		s.Worker = s.StartWorker(t)
		// A fresh Redis DB has no epoch marker, so the worker's first tick
		// runs a reconciliation; its stock-counter rebuild may over-count
		// takes in flight (by design: never under), so tests that compare
		// counters start after it.
		s.WaitReconciled(t, 30*time.Second)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.api.Shutdown(ctx)
		_ = simSrv.Shutdown(ctx)
		s.Sim.Close()
		sc.Close()
	})
	return s
}

// StartWorker starts another in-process worker on the stack's database and
// Redis (with its own connections), stopped when the test ends.
func (s *Stack) StartWorker(t testing.TB) *worker.Worker {
	t.Helper()
	sc, err := svc.New(s.Config, s.SC.Log.Named("worker"))
	if err != nil {
		t.Fatalf("testenv: worker context: %v", err)
	}
	w := worker.New(sc, sc.NewUseCases())
	if err := w.Start(); err != nil {
		t.Fatalf("testenv: start worker: %v", err)
	}
	t.Cleanup(func() {
		w.Shutdown(context.Background())
		sc.Close()
	})
	return w
}

func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// Eventually polls cond every 50 ms until it is true or the deadline passes.
func Eventually(t testing.TB, within time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	EventuallyEvery(t, within, 50*time.Millisecond, what, cond)
}

// InnoDBTrxPoll is how often a test may read information_schema.INNODB_TRX
// (or InnoDB's lock tables) and see news: the server refreshes that cache,
// one for all its clients, only once it has gone unread for 100 ms, so a
// faster poll keeps its first answer for ever.
const InnoDBTrxPoll = 250 * time.Millisecond

// EventuallyEvery is Eventually polling every `every`.
func EventuallyEvery(t testing.TB, within, every time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(within)
	var lastErr error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		lastErr = err
		time.Sleep(every)
	}
	t.Fatalf("timed out after %v waiting for %s (last error: %v)", within, what, errors.Join(lastErr))
}
