package testenv

import (
	"context"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"orderflow/internal/testenv/child"

	"github.com/redis/go-redis/v9"
)

// RedisServer is a private redis-server process that a test may kill and
// restart to simulate a Redis outage. The shared Redis is never touched: a
// test that must break Redis breaks its own.
type RedisServer struct {
	port int
	dir  string

	mu   sync.Mutex
	proc *ChildWorker // nil while killed
}

// StartRedisServer starts an empty, non-persistent redis-server on a spare
// port and kills it when the test ends.
func StartRedisServer(t testing.TB) *RedisServer {
	t.Helper()
	r := &RedisServer{port: sparePort(t), dir: t.TempDir()}
	r.Start(t)
	return r
}

// Addr is the server's host:port; it stays the same across restarts.
func (r *RedisServer) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

// Start (re)starts the server on its port, fresh and empty, and waits until
// it answers PING.
func (r *RedisServer) Start(t testing.TB) {
	t.Helper()
	r.mu.Lock()
	if r.proc != nil {
		r.mu.Unlock()
		t.Fatalf("testenv: redis-server :%d already running", r.port)
	}
	r.proc = startRedis(t, r.port, "--dir", r.dir)
	r.mu.Unlock()
}

// Kill ends the server with SIGKILL (no shutdown, no save) and waits until
// the process is gone, so the port refuses connections.
func (r *RedisServer) Kill(t testing.TB) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc == nil {
		t.Fatalf("testenv: redis-server :%d is not running", r.port)
	}
	r.proc.Kill()
	r.proc = nil
}

// startRedis runs an empty, non-persistent redis-server on port with extra
// arguments and waits until it answers PING. It is killed when the test
// ends, its output logged if the test failed.
func startRedis(t testing.TB, port int, args ...string) *ChildWorker {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		bin = "/usr/bin/redis-server"
	}
	args = append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--protected-mode", "no"}, args...)
	p := StartChild(t, child.Options{Name: "redis-server :" + strconv.Itoa(port), Path: bin, Args: args})

	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return p
		}
		if p.Exited() {
			t.Fatalf("testenv: %s exited at start:\n%s", p.Name, p.Out.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("testenv: %s not answering PING: %v", p.Name, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
