package testenv

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// RedisCounter is a proxy in front of Redis that counts the commands passing
// through it (a pipeline counts each of its commands), so a test can measure
// what one process of its own sends, whatever else talks to the server.
type RedisCounter struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	counts map[string]int // by "COMMAND first-key"
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
// ("EVALSHA asynq:{critical}:pending", "GET k").
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
			c.count(bufio.NewReader(io.TeeReader(in, out)))
		}()
	}
}

// count reads the client's commands as they are forwarded.
func (c *RedisCounter) count(r *bufio.Reader) {
	for {
		args, err := readRESPArray(r)
		if err != nil {
			_, _ = io.Copy(io.Discard, r) // keep forwarding
			return
		}
		shape := strings.ToUpper(args[0])
		switch {
		case (shape == "EVALSHA" || shape == "EVAL") && len(args) > 3:
			shape += " " + args[3]
		case len(args) > 1:
			shape += " " + args[1]
		}
		c.mu.Lock()
		c.counts[shape]++
		c.mu.Unlock()
	}
}

// readRESPArray reads one command (a RESP array of bulk strings) and returns
// its first four arguments.
func readRESPArray(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimRight(strings.TrimPrefix(line, "*"), "\r\n"))
	if err != nil || n < 1 {
		return nil, fmt.Errorf("not a RESP array: %q", line)
	}
	var args []string
	for i := 0; i < n; i++ {
		h, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(strings.TrimRight(strings.TrimPrefix(h, "$"), "\r\n"))
		if err != nil {
			return nil, fmt.Errorf("bad RESP bulk header %q", h)
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		if i < 4 {
			args = append(args, string(buf[:size]))
		}
	}
	return args, nil
}
