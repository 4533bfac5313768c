package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"orderflow/internal/testenv/child"
)

// binaries are the product's two programs, built once per run.
type binaries struct{ api, queue string }

func buildBinaries(ctx context.Context, dir string) (binaries, error) {
	bin := filepath.Join(dir, "bin")
	err := child.Build(ctx, bin, "api", "queue")
	return binaries{api: child.Path(bin, "api"), queue: child.Path(bin, "queue")}, err
}

// benchChild is one product process started by the bench.
type benchChild struct {
	*child.Process
	addr string // its ORDERFLOW_HTTP_ADDR
	log  string
}

// startChild runs bin with the given environment (on top of the bench's
// own, minus any ORDERFLOW_* it had), logging to dir/logs/<name>.log. A
// bench killed mid-run takes its children with it.
func startChild(name, bin string, args, env []string, addr, dir string) (*benchChild, error) {
	logPath := filepath.Join(dir, "logs", name+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	p, err := child.Start(child.Options{Name: name, Path: bin, Args: args, Env: append(cleanEnv(), env...),
		Out: f, DieWithParent: true})
	if err != nil {
		f.Close()
		return nil, err
	}
	go func() { <-p.Done(); f.Close() }()
	return &benchChild{Process: p, addr: addr, log: logPath}, nil
}

// runOnce runs a short command (the migration) to completion.
func runOnce(ctx context.Context, bin string, args, env []string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(cleanEnv(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return nil
}

func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ORDERFLOW_") {
			out = append(out, kv)
		}
	}
	return out
}

// waitReady polls /readyz (database, Redis, migrations) until it answers 200.
func (c *benchChild) waitReady(ctx context.Context, within time.Duration) error {
	if err := c.WaitHTTP(ctx, "http://"+c.addr+"/readyz", within); err != nil {
		return fmt.Errorf("%w; see %s", err, c.log)
	}
	return nil
}

// freeAddr returns a loopback address nobody listens on right now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// stack is one start of the product: an API and its workers.
type stack struct {
	api     *benchChild
	workers []*benchChild
	apiURL  string
	stopped bool // stop has run
}

// stackConfig is what differs between the bench's starts.
type stackConfig struct {
	label     string   // log file prefix
	mysqlDSN  string   // the product's ORDERFLOW_MYSQL_DSN
	redisAddr string   // ORDERFLOW_REDIS_ADDR
	apiDSN    string   // when set, the API's DSN differs (counting proxy)
	apiRedis  string   // likewise for Redis
	env       []string // further ORDERFLOW_* for every process
}

// productEnv is the settings every product process of the bench gets (the
// in-process passes of the growth phase too).
func productEnv(e *benchEnv, dsn, redisAddr string) []string {
	env := []string{
		"ORDERFLOW_MYSQL_DSN=" + dsn,
		"ORDERFLOW_REDIS_ADDR=" + redisAddr,
		fmt.Sprintf("ORDERFLOW_REDIS_DB=%d", e.redisDB),
		"ORDERFLOW_ADMIN_TOKEN=" + e.adminToken,
		"ORDERFLOW_PAY_SECRET=" + e.paySecret,
	}
	if e.paysimURL != "" {
		env = append(env, "ORDERFLOW_PAY_URL="+e.paysimURL)
	}
	return env
}

func startStack(ctx context.Context, b binaries, e *benchEnv, sc stackConfig) (*stack, error) {
	s := &stack{}
	base := func(addr, dsn, redisAddr string) []string {
		env := append(productEnv(e, dsn, redisAddr), "ORDERFLOW_CONFIG=/nonexistent", "ORDERFLOW_HTTP_ADDR="+addr)
		env = append(env, sc.env...)
		if e.params.GoMaxProcs > 0 {
			env = append(env, fmt.Sprintf("GOMAXPROCS=%d", e.params.GoMaxProcs))
		}
		return append(env, e.params.Extra...)
	}
	for i := 0; i < e.params.Workers; i++ {
		addr, err := freeAddr()
		if err != nil {
			return s, err
		}
		env := append(base(addr, sc.mysqlDSN, sc.redisAddr),
			fmt.Sprintf("ORDERFLOW_CONCURRENCY=%d", e.params.Concurrency),
			fmt.Sprintf("ORDERFLOW_DB_MAX_OPEN=%d", e.params.DBMaxOpen))
		w, err := startChild(fmt.Sprintf("%s-queue%d", sc.label, i+1), b.queue, nil, env, addr, e.params.WorkDir)
		if err != nil {
			return s, err
		}
		s.workers = append(s.workers, w)
	}
	addr, err := freeAddr()
	if err != nil {
		return s, err
	}
	dsn, rds := sc.mysqlDSN, sc.redisAddr
	if sc.apiDSN != "" {
		dsn, rds = sc.apiDSN, sc.apiRedis
	}
	if s.api, err = startChild(sc.label+"-api", b.api, nil, base(addr, dsn, rds), addr, e.params.WorkDir); err != nil {
		return s, err
	}
	s.apiURL = "http://" + addr
	for _, c := range s.all() {
		if err := c.waitReady(ctx, 30*time.Second); err != nil {
			return s, err
		}
	}
	return s, nil
}

func (s *stack) all() []*benchChild {
	var out []*benchChild
	if s.api != nil {
		out = append(out, s.api)
	}
	return append(out, s.workers...)
}

// stop ends the API first (no new work), then the workers; every process
// must exit 0 after SIGTERM. A second stop does nothing, so a phase can
// defer one and still return the first one's error.
func (s *stack) stop() error {
	if s.stopped {
		return nil
	}
	s.stopped = true
	var errs []error
	for _, c := range s.all() {
		if err := c.Stop(30 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
