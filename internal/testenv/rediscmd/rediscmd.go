// Package rediscmd reads the commands a Redis client sends as a counting
// proxy forwards them — the bench's census, a test's budget of an idle
// worker's commands — and names each by its shape. It imports nothing of
// the test harness, so the bench binary can use it.
package rediscmd

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Count reads the client's commands from r (the client's side of a
// connection, on its way to Redis) and calls each with every command's
// shape until r ends. What it cannot parse it reads on and drops, so the
// forwarding goes on.
func Count(r io.Reader, each func(shape string)) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		args, err := readCommand(br)
		if err != nil {
			_, _ = io.Copy(io.Discard, br) // keep forwarding what we cannot parse
			return
		}
		if len(args) > 0 {
			each(shape(args))
		}
	}
}

// readCommand reads one client command (a RESP array of bulk strings, or
// an inline command) and returns its first four arguments.
func readCommand(r *bufio.Reader) ([]string, error) {
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

// shape names a command by what it is and which key family it touches:
// "EVALSHA asynq:{critical}:pending", "DEL cache:order:no:*".
func shape(args []string) string {
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
