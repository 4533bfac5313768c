package testenv

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisServer is a private redis-server process that a test may kill and
// restart to simulate a Redis outage. The shared Redis is never touched: a
// test that must break Redis breaks its own.
type RedisServer struct {
	bin  string
	port int
	dir  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	out  *LockedBuffer
	done chan struct{}
}

// StartRedisServer starts an empty, non-persistent redis-server on a spare
// port and kills it when the test ends.
func StartRedisServer(t testing.TB) *RedisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		bin = "/usr/bin/redis-server"
	}
	r := &RedisServer{bin: bin, port: sparePort(t), dir: t.TempDir()}
	r.Start(t)
	t.Cleanup(func() {
		r.stop()
		if t.Failed() {
			t.Logf("redis-server :%d output:\n%s", r.port, r.output())
		}
	})
	return r
}

// Addr is the server's host:port; it stays the same across restarts.
func (r *RedisServer) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

// Start (re)starts the server on its port, fresh and empty, and waits until
// it answers PING.
func (r *RedisServer) Start(t testing.TB) {
	t.Helper()
	r.mu.Lock()
	if r.cmd != nil {
		r.mu.Unlock()
		t.Fatalf("testenv: redis-server :%d already running", r.port)
	}
	out := &LockedBuffer{}
	cmd := exec.Command(r.bin, "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.dir, "--protected-mode", "no")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		r.mu.Unlock()
		t.Fatalf("testenv: start redis-server: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	r.cmd, r.out, r.done = cmd, out, done
	r.mu.Unlock()

	c := redis.NewClient(&redis.Options{Addr: r.Addr(), DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		select {
		case <-done:
			t.Fatalf("testenv: redis-server :%d exited at start:\n%s", r.port, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("testenv: redis-server :%d not answering PING: %v", r.port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Kill ends the server with SIGKILL (no shutdown, no save) and waits until
// the process is gone, so the port refuses connections.
func (r *RedisServer) Kill(t testing.TB) {
	t.Helper()
	if !r.stop() {
		t.Fatalf("testenv: redis-server :%d is not running", r.port)
	}
}

func (r *RedisServer) stop() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		return false
	}
	_ = r.cmd.Process.Kill()
	<-r.done
	r.cmd = nil
	return true
}

func (r *RedisServer) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.out == nil {
		return ""
	}
	return r.out.String()
}

// sparePort finds a free TCP port below the kernel's ephemeral range, so no
// client connection can be handed the port while the server is down (and
// connect to itself).
func sparePort(t testing.TB) int {
	t.Helper()
	for range 200 {
		p := 20000 + rand.IntN(10000)
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		ln.Close()
		return p
	}
	t.Fatal("testenv: no spare port in 20000..29999")
	return 0
}

// LockedBuffer is a bytes.Buffer safe for a child process's output copier
// and the test reading it at once.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// SparePort returns a free TCP port for a process the test starts.
func SparePort(t testing.TB) int { return sparePort(t) }
