package chaos

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// sparePort finds a free port below the kernel's ephemeral range, so no
// client connection is handed a port while its server is down.
func sparePort(taken map[int]bool) (int, error) {
	for range 500 {
		p := 20000 + rand.IntN(10000)
		if taken[p] {
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		ln.Close()
		taken[p] = true
		return p, nil
	}
	return 0, fmt.Errorf("no spare port in 20000..29999")
}

// mariaDB is a private MariaDB server on a spare port with its own data
// directory: the chaos run may kill -9 it and restart it on the same data.
type mariaDB struct {
	port    int
	datadir string
	proc    *proc
}

func findBinary(names ...string) (string, error) {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
		for _, dir := range []string{"/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin"} {
			if p := filepath.Join(dir, n); fileExists(p) {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("none of %v installed", names)
}

// mariadbBinaries finds the MariaDB server and its data-directory installer.
func mariadbBinaries() (server, install string, err error) {
	if server, err = findBinary("mariadbd", "mysqld"); err != nil {
		return "", "", err
	}
	install, err = findBinary("mariadb-install-db", "mysql_install_db")
	return server, install, err
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// newMariaDB initialises a data directory (root, no password, over TCP) and
// prepares the server process; Start it with m.proc.Start.
func newMariaDB(datadir, logdir string, port int) (*mariaDB, error) {
	server, install, err := mariadbBinaries()
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(install, "--no-defaults", "--datadir="+datadir,
		"--auth-root-authentication-method=normal", "--skip-test-db", "--user="+currentUser()).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("mariadb-install-db: %v\n%s", err, out)
	}
	args := []string{
		"--no-defaults", "--datadir=" + datadir, "--port=" + strconv.Itoa(port),
		"--socket=" + filepath.Join(datadir, "mysqld.sock"), "--bind-address=127.0.0.1",
		"--user=" + currentUser(), "--skip-name-resolve", "--max-connections=600",
		"--innodb-buffer-pool-size=128M", "--innodb-log-file-size=48M",
		"--pid-file=" + filepath.Join(datadir, "mysqld.pid"),
	}
	m := &mariaDB{port: port, datadir: datadir}
	m.proc = newProc("mariadb", server, args, os.Environ(), filepath.Join(logdir, "mariadb.log"))
	return m, nil
}

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if os.Getuid() == 0 {
		return "root"
	}
	return strconv.Itoa(os.Getuid())
}

// ServerDSN is the server's DSN without a database.
func (m *mariaDB) ServerDSN() string {
	return fmt.Sprintf("root@tcp(127.0.0.1:%d)/", m.port)
}

// DSN is the ledger's DSN, with timeouts so a dead server is noticed fast.
func (m *mariaDB) DSN(db string) string {
	return fmt.Sprintf("root@tcp(127.0.0.1:%d)/%s?timeout=2s&readTimeout=10s&writeTimeout=10s", m.port, db)
}

// WaitReady pings until the server answers.
func (m *mariaDB) WaitReady(ctx context.Context, within time.Duration) error {
	db, err := openPolling(m.ServerDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	return pollReady(ctx, within, 100*time.Millisecond, fmt.Sprintf("mariadb :%d", m.port), db.PingContext)
}

// redisServer is a private, non-persistent redis-server: a restart is empty.
type redisServer struct {
	port int
	proc *proc
}

func newRedis(dir, logdir string, port int) (*redisServer, error) {
	bin, err := findBinary("redis-server")
	if err != nil {
		return nil, err
	}
	args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--protected-mode", "no", "--maxclients", "2000"}
	return &redisServer{port: port, proc: newProc("redis", bin, args, os.Environ(), filepath.Join(logdir, "redis.log"))}, nil
}

func (r *redisServer) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

// WaitReady pings until the server answers.
func (r *redisServer) WaitReady(ctx context.Context, within time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: r.Addr(), DialTimeout: 300 * time.Millisecond, MaxRetries: -1})
	defer c.Close()
	return pollReady(ctx, within, 50*time.Millisecond, fmt.Sprintf("redis :%d", r.port),
		func(ctx context.Context) error { return c.Ping(ctx).Err() })
}

// waitHTTP polls url until it answers 200.
func waitHTTP(ctx context.Context, url string, within time.Duration) error {
	c := &http.Client{Timeout: time.Second}
	return pollReady(ctx, within, 100*time.Millisecond, url, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
		if err != nil {
			return err
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	})
}

// pollReady calls ping, each try bounded by a second, every `every` until it
// succeeds, ctx ends or within has passed.
func pollReady(ctx context.Context, within, every time.Duration, what string, ping func(context.Context) error) error {
	deadline := time.Now().Add(within)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := ping(pctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s not ready: %w", what, err)
		}
		time.Sleep(every)
	}
}

// proxy forwards a local port to a target and can be cut (connections
// refused, open ones dropped) and restored: the provider "down".
type proxy struct {
	port   int
	target string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
}

func newProxy(port int, target string) *proxy {
	return &proxy{port: port, target: target, conns: map[net.Conn]struct{}{}}
}

func (p *proxy) Addr() string { return "127.0.0.1:" + strconv.Itoa(p.port) }

// Restore listens again.
func (p *proxy) Restore() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		return nil
	}
	var ln net.Listener
	var err error
	for range 100 {
		if ln, err = net.Listen("tcp", p.Addr()); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("proxy listen %s: %w", p.Addr(), err)
	}
	p.ln = ln
	go p.accept(ln)
	return nil
}

// Cut stops listening and drops every open connection.
func (p *proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
}

func (p *proxy) track(c net.Conn, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
}

func (p *proxy) accept(ln net.Listener) {
	for {
		in, err := ln.Accept()
		if err != nil {
			return
		}
		go p.pipe(in)
	}
}

func (p *proxy) pipe(in net.Conn) {
	out, err := net.DialTimeout("tcp", p.target, time.Second)
	if err != nil {
		in.Close()
		return
	}
	p.track(in, true)
	p.track(out, true)
	defer func() {
		p.track(in, false)
		p.track(out, false)
		in.Close()
		out.Close()
	}()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
	go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
	<-done
}
