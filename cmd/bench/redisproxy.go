package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
)

// burstReader counts the reads that returned data: one per client write
// burst (a command, or a whole pipeline).
type burstReader struct {
	r io.Reader
	c *counter
}

func (b burstReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.c.addRoundTrip()
	}
	return n, err
}

// serveRedis sits between one product process and Redis and counts the
// commands it sends (by command and key shape) and its write bursts — a
// pipeline is one burst, so bursts approximate round trips.
func serveRedis(counts *counter, client, server net.Conn) {
	go func() {
		_, _ = io.Copy(client, server)
		client.Close()
	}()
	r := bufio.NewReaderSize(io.TeeReader(burstReader{client, counts}, server), 64<<10)
	for {
		args, err := readRESPCommand(r)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				_, _ = io.Copy(io.Discard, r) // keep forwarding what we cannot parse
			}
			return
		}
		if len(args) > 0 {
			counts.add(redisShape(args), false)
		}
	}
}

// readRESPCommand reads one client command (a RESP array of bulk strings,
// or an inline command) and returns its first four arguments.
func readRESPCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimRight(line, "\r\n")
	if !strings.HasPrefix(line, "*") {
		return strings.Fields(line), nil
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil {
		return nil, fmt.Errorf("bad RESP array header %q", line)
	}
	var args []string
	for i := 0; i < n; i++ {
		h, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(strings.TrimRight(h, "\r\n")[1:])
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

// redisShape names a command by what it is and which key family it touches:
// "EVALSHA asynq:{critical}:pending", "DEL cache:order:no:*".
func redisShape(args []string) string {
	cmd := strings.ToUpper(args[0])
	key := ""
	switch {
	case (cmd == "EVALSHA" || cmd == "EVAL") && len(args) > 3:
		key = args[3]
	case cmd == "EVALSHA" || cmd == "EVAL":
		key = "(no keys)"
	case len(args) > 1:
		key = args[1]
	}
	return strings.TrimSpace(cmd + " " + keyShape(key))
}

// keyShape replaces the variable parts of a key (numbers, order and task
// IDs) with "*".
func keyShape(key string) string {
	parts := strings.Split(key, ":")
	for i, s := range parts {
		if len(s) > 20 || strings.ContainsAny(s, "0123456789") && !strings.HasPrefix(s, "{") {
			parts[i] = "*"
			return strings.Join(parts[:i+1], ":")
		}
	}
	return key
}
