package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// binaries are the product's two programs, built once per run.
type binaries struct{ api, queue string }

func buildBinaries(ctx context.Context, dir string) (binaries, error) {
	b := binaries{api: filepath.Join(dir, "bin", "api"), queue: filepath.Join(dir, "bin", "queue")}
	for pkg, out := range map[string]string{"./api": b.api, "./queue": b.queue} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
		if msg, err := cmd.CombinedOutput(); err != nil {
			return b, fmt.Errorf("go build %s: %w\n%s", pkg, err, msg)
		}
	}
	return b, nil
}

// child is one product process started by the bench.
type child struct {
	name string
	cmd  *exec.Cmd
	addr string // its ORDERFLOW_HTTP_ADDR
	log  string
	done chan struct{}
	err  error
}

// startChild runs bin with the given environment (on top of the bench's
// own, minus any ORDERFLOW_* it had), logging to dir/<name>.log.
func startChild(name, bin string, args, env []string, addr, dir string) (*child, error) {
	logPath := filepath.Join(dir, "logs", name+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	// A bench killed mid-run takes its children with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, addr: addr, log: logPath, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		f.Close()
		close(c.done)
	}()
	return c, nil
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

func (c *child) pid() int { return c.cmd.Process.Pid }

// waitReady polls /readyz (database, Redis, migrations) until it answers 200.
func (c *child) waitReady(ctx context.Context, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		select {
		case <-c.done:
			return fmt.Errorf("%s exited during start-up (%v); see %s", c.name, c.err, c.log)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := http.Get("http://" + c.addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %s; see %s", c.name, within, c.log)
}

// stop sends SIGTERM and waits for a clean exit (the product exits 0 after
// draining); after `within` it kills.
func (c *child) stop(within time.Duration) error {
	select {
	case <-c.done:
		return fmt.Errorf("%s had already exited: %v", c.name, c.err)
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
		if c.err != nil {
			return fmt.Errorf("%s: exit after SIGTERM: %w", c.name, c.err)
		}
		return nil
	case <-time.After(within):
		_ = c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("%s did not exit within %s of SIGTERM; killed", c.name, within)
	}
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
	api     *child
	workers []*child
	apiURL  string
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

func startStack(ctx context.Context, b binaries, e *benchEnv, sc stackConfig) (*stack, error) {
	s := &stack{}
	base := func(addr, dsn, redisAddr string) []string {
		env := []string{
			"ORDERFLOW_CONFIG=/nonexistent",
			"ORDERFLOW_MYSQL_DSN=" + dsn,
			"ORDERFLOW_REDIS_ADDR=" + redisAddr,
			fmt.Sprintf("ORDERFLOW_REDIS_DB=%d", e.redisDB),
			"ORDERFLOW_HTTP_ADDR=" + addr,
			"ORDERFLOW_ADMIN_TOKEN=" + e.adminToken,
			"ORDERFLOW_PAY_SECRET=" + e.paySecret,
			"ORDERFLOW_PAY_URL=" + e.paysimURL,
		}
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

func (s *stack) all() []*child {
	var out []*child
	if s.api != nil {
		out = append(out, s.api)
	}
	return append(out, s.workers...)
}

// stop ends the API first (no new work), then the workers; every process
// must exit 0 after SIGTERM.
func (s *stack) stop() error {
	var errs []error
	for _, c := range s.all() {
		if err := c.stop(30 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
