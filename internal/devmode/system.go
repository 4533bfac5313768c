// Package devmode runs the whole of orderflow in one process with nothing
// installed: the ledger in a SQLite file, an in-process Redis-compatible
// server for asynq, the API, the worker with its scheduler, the dashboard and
// the payment simulator. Production runs on MySQL/MariaDB and Redis; this is
// for seeing it work, the walkthrough and the demo.
package devmode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"orderflow/api/handler"
	"orderflow/internal/paysim"
	"orderflow/model"
	"orderflow/queue/worker"
	"orderflow/svc"

	"github.com/alicebob/miniredis/v2"
	"go.uber.org/zap"
)

// Options place the system.
type Options struct {
	DataDir    string   // the ledger file and the remembered tokens; created if missing
	APIAddr    string   // the API and the dashboard
	WorkerAddr string   // the worker's /healthz, /readyz, /metrics
	PaysimAddr string   // the payment simulator
	RedisAddr  string   // the embedded Redis ("127.0.0.1:0": any free port)
	Environ    []string // ORDERFLOW_* overrides, as os.Environ()
	NoSeed     bool     // leave a new ledger empty instead of seeding the demo catalogue
}

// DefaultOptions are the README's: the production default ports, data under tmp/dev.
func DefaultOptions() Options {
	return Options{
		DataDir:    filepath.Join("tmp", "dev"),
		APIAddr:    "127.0.0.1:8080",
		WorkerAddr: "127.0.0.1:8081",
		PaysimAddr: "127.0.0.1:8090",
		RedisAddr:  "127.0.0.1:0",
		Environ:    os.Environ(),
	}
}

// System is a running dev system.
type System struct {
	Config     svc.Config
	Log        *zap.Logger
	APIURL     string
	WorkerURL  string
	PaysimURL  string
	RedisAddr  string
	DBPath     string
	AdminToken string
	// Seeded is the demo catalogue, when this data directory was seeded.
	Seeded *Seeded
	// Restarted says the ledger existed before this start.
	Restarted bool

	redis   *miniredis.Miniredis
	api     *http.Server
	sim     *paysim.Sim
	simSrv  *http.Server
	worker  *worker.Worker
	apiSC   *svc.ServiceContext
	wSC     *svc.ServiceContext
	stopped bool
}

// owned are settings the dev system decides: where the ledger and Redis are.
var owned = []string{"MYSQL_DSN", "SQLITE_PATH", "REDIS_", "HTTP_ADDR", "PAY_URL", "CONFIG"}

// Start brings the system up; Close stops it.
func Start(ctx context.Context, opt Options) (sys *System, err error) {
	if err := os.MkdirAll(opt.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	st, err := loadState(opt.DataDir)
	if err != nil {
		return nil, err
	}
	s := &System{DBPath: filepath.Join(opt.DataDir, "orderflow.db")}
	if _, err := os.Stat(s.DBPath); err == nil {
		s.Restarted = true
	}
	var apiLn, simLn net.Listener
	defer func() {
		if err != nil {
			for _, ln := range []net.Listener{apiLn, simLn} {
				if ln != nil {
					ln.Close()
				}
			}
			s.Close(context.Background())
		}
	}()
	if apiLn, err = net.Listen("tcp", opt.APIAddr); err != nil {
		return nil, fmt.Errorf("api listener: %w", err)
	}
	if simLn, err = net.Listen("tcp", opt.PaysimAddr); err != nil {
		return nil, fmt.Errorf("payment simulator listener: %w", err)
	}
	if s.redis, err = StartRedis(opt.RedisAddr); err != nil {
		return nil, err
	}
	s.RedisAddr = s.redis.Addr()
	s.APIURL = "http://" + apiLn.Addr().String()
	s.PaysimURL = "http://" + simLn.Addr().String()

	cfg, warnings, err := s.config(opt, st)
	if err != nil {
		return nil, err
	}
	s.Config, s.AdminToken = cfg, cfg.AdminToken
	if s.Log, err = svc.NewLogger(cfg); err != nil {
		return nil, err
	}
	s.Log = s.Log.With(zap.String("process", "dev"))
	for _, w := range warnings {
		s.Log.Warn(w)
	}

	if s.apiSC, err = svc.New(cfg, s.Log.Named("api")); err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	if _, err = model.Migrate(ctx, s.apiSC.DB); err != nil {
		return nil, err
	}
	uc := s.apiSC.NewUseCases()
	if !s.Restarted && !opt.NoSeed {
		if st.Seeded, err = seed(ctx, uc, s.apiSC.Clock.Now()); err != nil {
			return nil, fmt.Errorf("seed the demo catalogue: %w", err)
		}
	}
	if err = st.save(opt.DataDir); err != nil {
		return nil, err
	}
	s.Seeded = st.Seeded

	s.api = cfg.HTTPServer(handler.NewRouter(s.apiSC, uc))
	go s.serve("api", s.api, apiLn)
	s.sim = paysim.New(paysim.Config{Secret: cfg.PaySecret, NotifyBaseURL: s.APIURL, Logger: s.Log.Named("paysim")})
	s.simSrv = cfg.HTTPServer(s.sim.Handler())
	go s.serve("paysim", s.simSrv, simLn)

	wcfg := cfg
	wcfg.HTTPAddr = opt.WorkerAddr
	if s.wSC, err = svc.New(wcfg, s.Log.Named("worker")); err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	w := worker.New(s.wSC, s.wSC.NewUseCases())
	if err = w.Start(); err != nil {
		return nil, err
	}
	s.worker = w
	s.WorkerURL = "http://" + s.worker.Addr()
	return s, nil
}

// config is the production configuration pointed at the embedded services,
// with the caller's ORDERFLOW_* overrides on top (except where the ledger
// and Redis are, which are the point of this mode).
func (s *System) config(opt Options, st *state) (svc.Config, []string, error) {
	env := []string{
		"ORDERFLOW_SQLITE_PATH=" + s.DBPath,
		"ORDERFLOW_REDIS_ADDR=" + s.RedisAddr,
		"ORDERFLOW_ADMIN_TOKEN=" + st.AdminToken,
		"ORDERFLOW_PAY_SECRET=" + st.PaySecret,
		"ORDERFLOW_PAY_URL=" + s.PaysimURL,
		"ORDERFLOW_HTTP_ADDR=" + opt.APIAddr,
		"ORDERFLOW_LOG_FORMAT=console",
		"ORDERFLOW_LOG_LEVEL=warn",
		// SQLite has one writer at a time: a small pool queues less.
		"ORDERFLOW_DB_MAX_OPEN=8",
		"ORDERFLOW_CONCURRENCY=8",
	}
	var ignored []string
	for _, kv := range opt.Environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, svc.EnvPrefix) {
			continue
		}
		if isOwned(strings.TrimPrefix(name, svc.EnvPrefix)) {
			ignored = append(ignored, name)
			continue
		}
		env = append(env, kv)
	}
	cfg, warnings, err := svc.Load("", env)
	for _, name := range ignored {
		warnings = append(warnings, "dev mode: "+name+" ignored (the ledger and Redis are embedded)")
	}
	if err != nil {
		return cfg, warnings, err
	}
	st.AdminToken, st.PaySecret = cfg.AdminToken, cfg.PaySecret
	return cfg, warnings, nil
}

func isOwned(key string) bool {
	for _, o := range owned {
		if key == o || (strings.HasSuffix(o, "_") && strings.HasPrefix(key, o)) {
			return true
		}
	}
	return false
}

func (s *System) serve(name string, srv *http.Server, ln net.Listener) {
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.Log.Error(name+" server stopped", zap.Error(err))
	}
}

// Close stops the API (draining requests), the worker (finishing running
// tasks), the simulator and the embedded Redis, and closes the ledger.
func (s *System) Close(ctx context.Context) {
	if s.stopped {
		return
	}
	s.stopped = true
	if s.api != nil {
		_ = s.api.Shutdown(ctx)
	}
	if s.worker != nil {
		s.worker.Shutdown(ctx)
	}
	if s.simSrv != nil {
		_ = s.simSrv.Shutdown(ctx)
		s.sim.Close()
	}
	for _, sc := range []*svc.ServiceContext{s.wSC, s.apiSC} {
		if sc != nil {
			_ = sc.Close()
		}
	}
	if s.redis != nil {
		s.redis.Close()
	}
}
