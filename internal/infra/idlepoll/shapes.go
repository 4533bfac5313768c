package idlepoll

import (
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The SHA-1 of asynq v0.26.0's scripts this package answers for
// (internal/rdb/rdb.go: dequeueCmd and forwardCmd). A call with any other
// script, or with keys not shaped as below, passes through untouched; the
// package's tests run a real asynq server and fail when its calls stop
// being recognised (an asynq upgrade that changed either script).
const (
	dequeueSHA = "a8153319360adc71cdc370107f8ab9786f204765"
	forwardSHA = "522b1a6ae66fe79ea2f24a9af58798ab71879035"
)

// callKind is what an intercepted command is.
type callKind int

const (
	otherCall   callKind = iota
	dequeueCall          // asynq's processor trying one queue
	forwardCall          // asynq's forwarder moving one scheduled or retry set's due tasks
)

// asynqCall is a recognised call of one of asynq's polling scripts.
type asynqCall struct {
	kind  callKind
	queue string
	key   string // forward: the scheduled or retry set
	unix  int64  // forward: ARGV[1], the second the forwarder asks about
	lease any    // dequeue: ARGV[1], the lease's expiry (unix seconds)
}

// dequeueArgs are asynq's dequeue call for queue q (the shape recognise
// takes for one), the lease's expiry given.
func dequeueArgs(q string, lease any) []any {
	return []any{"evalsha", dequeueSHA, 4, key(q, "pending"), key(q, "paused"), key(q, "active"), key(q, "lease"), lease, key(q, "t") + ":"}
}

// recognise classifies cmd. Dequeue is
// EVALSHA dequeueSHA 4 asynq:{q}:pending asynq:{q}:paused asynq:{q}:active asynq:{q}:lease <lease unix> asynq:{q}:t:
// and forward is
// EVALSHA forwardSHA 2 asynq:{q}:scheduled|retry asynq:{q}:pending <unix> asynq:{q}:t: <unix nano> asynq:{q}:g:
// (or EVAL with the script's source, go-redis's fallback after NOSCRIPT).
func recognise(cmd redis.Cmder) asynqCall {
	args := cmd.Args()
	if len(args) < 3 {
		return asynqCall{}
	}
	name, _ := args[0].(string)
	script, _ := args[1].(string)
	var sha string
	switch {
	case strings.EqualFold(name, "evalsha"):
		sha = script
	case strings.EqualFold(name, "eval"):
		sha = newScript(script).sha
	default:
		return asynqCall{}
	}
	if sha != dequeueSHA && sha != forwardSHA {
		return asynqCall{}
	}
	n, ok := args[2].(int)
	if !ok || len(args) < 3+n {
		return asynqCall{}
	}
	keys, rest := strs(args[3:3+n]), args[3+n:]
	if keys == nil {
		return asynqCall{}
	}
	if sha == dequeueSHA {
		return recogniseDequeue(keys, rest)
	}
	return recogniseForward(keys, rest)
}

func recogniseDequeue(keys []string, argv []any) asynqCall {
	if len(keys) != 4 || len(argv) != 2 {
		return asynqCall{}
	}
	q, ok := queueOf(keys[0], "pending")
	if !ok || keys[1] != key(q, "paused") || keys[2] != key(q, "active") || keys[3] != key(q, "lease") ||
		argv[1] != key(q, "t")+":" {
		return asynqCall{}
	}
	return asynqCall{kind: dequeueCall, queue: q, lease: argv[0]}
}

func recogniseForward(keys []string, argv []any) asynqCall {
	if len(keys) != 2 || len(argv) != 4 {
		return asynqCall{}
	}
	q, ok := queueOf(keys[0], "scheduled")
	if !ok {
		q, ok = queueOf(keys[0], "retry")
	}
	unix, isInt := argv[0].(int64)
	if !ok || !isInt || keys[1] != key(q, "pending") || argv[1] != key(q, "t")+":" || argv[3] != key(q, "g")+":" {
		return asynqCall{}
	}
	return asynqCall{kind: forwardCall, queue: q, key: keys[0], unix: unix}
}

// key is asynq's key for a queue's part: asynq:{q}:part.
func key(queue, part string) string { return "asynq:{" + queue + "}:" + part }

// queueOf returns q when k is asynq:{q}:part.
func queueOf(k, part string) (string, bool) {
	q, ok := strings.CutPrefix(k, "asynq:{")
	if !ok {
		return "", false
	}
	q, ok = strings.CutSuffix(q, "}:"+part)
	return q, ok && q != ""
}

// strs returns the values as strings, or nil if one is not a string.
func strs(vs []any) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		s, ok := v.(string)
		if !ok {
			return nil
		}
		out[i] = s
	}
	return out
}

// asInt reads a script's integer answer.
func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		return i, err == nil
	}
	return 0, false
}
