package testenv

import (
	"io"
	"net"
	"sync"
	"testing"

	"orderflow/internal/testenv/rediscmd"
)

// RedisCounter is a proxy in front of Redis that counts the commands passing
// through it (a pipeline counts each of its commands), so a test can measure
// what one process of its own sends, whatever else talks to the server.
type RedisCounter struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	counts map[string]int // by rediscmd's shape: "COMMAND key-family"
	wg     sync.WaitGroup
	conns  map[net.Conn]struct{}
}

// StartRedisCounter listens on a spare local port and forwards every
// connection to target; it stops when the test ends.
func StartRedisCounter(t testing.TB, target string) *RedisCounter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: redis counter: %v", err)
	}
	c := &RedisCounter{ln: ln, target: target, counts: map[string]int{}, conns: map[net.Conn]struct{}{}}
	c.wg.Add(1)
	go c.accept()
	t.Cleanup(c.close)
	return c
}

// Addr is the proxy's host:port.
func (c *RedisCounter) Addr() string { return c.ln.Addr().String() }

// Counts returns the commands counted so far by shape
// ("EVALSHA asynq:{critical}:pending", "DEL cache:order:no:*").
func (c *RedisCounter) Counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.counts))
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

// Total is the number of commands counted so far.
func (c *RedisCounter) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.counts {
		n += v
	}
	return n
}

func (c *RedisCounter) add(shape string) {
	c.mu.Lock()
	c.counts[shape]++
	c.mu.Unlock()
}

func (c *RedisCounter) close() {
	_ = c.ln.Close()
	c.mu.Lock()
	for conn := range c.conns {
		_ = conn.Close()
	}
	c.mu.Unlock()
	c.wg.Wait()
}

func (c *RedisCounter) accept() {
	defer c.wg.Done()
	for {
		in, err := c.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", c.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		c.mu.Lock()
		c.conns[in], c.conns[out] = struct{}{}, struct{}{}
		c.mu.Unlock()
		c.wg.Add(2)
		go func() {
			defer c.wg.Done()
			_, _ = io.Copy(in, out)
			_ = in.Close()
		}()
		go func() {
			defer c.wg.Done()
			defer out.Close()
			rediscmd.Count(io.TeeReader(in, out), c.add)
		}()
	}
}
