package idlepoll

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// readyCheck asks, for all of a worker's queues at once, whether asynq's
// dequeue script would find a task. Read-only.
//
// KEYS[2i-1] -> asynq:{<qname>}:pending, for the i-th queue
// KEYS[2i]   -> asynq:{<qname>}:paused
// Returns one integer per queue: 1 when the queue is not paused and its
// pending list is not empty, else 0.
var readyCheck = newScript(`
local r = {}
for i = 1, #KEYS, 2 do
	if redis.call("EXISTS", KEYS[i+1]) == 0 and redis.call("LLEN", KEYS[i]) > 0 then
		r[#r+1] = 1
	else
		r[#r+1] = 0
	end
end
return r`)

// dueCheck asks, for all of a worker's scheduled and retry sets at once,
// whether asynq's forward script would move a task. Read-only.
//
// KEYS[i]  -> asynq:{<qname>}:scheduled or asynq:{<qname>}:retry
// ARGV[1]  -> the unix second the forwarder asks about (its script's ARGV[1])
// Returns one integer per key: 1 when a member's score is ≤ ARGV[1], else 0.
var dueCheck = newScript(`
local r = {}
for i = 1, #KEYS do
	if #redis.call("ZRANGEBYSCORE", KEYS[i], "-inf", ARGV[1], "LIMIT", 0, 1) > 0 then
		r[i] = 1
	else
		r[i] = 0
	end
end
return r`)

// script is a Lua script and its SHA-1.
type script struct{ src, sha string }

func newScript(src string) script {
	sum := sha1.Sum([]byte(src))
	return script{src: src, sha: hex.EncodeToString(sum[:])}
}

// run sends a check script through the rest of the hook chain (not through
// the client, so this hook never sees its own calls), loading it on
// NOSCRIPT, and returns its flags: one per group of per keys.
func run(ctx context.Context, next redis.ProcessHook, s script, per int, keys []string, argv ...any) ([]bool, error) {
	call := func(name, script string) (*redis.Cmd, error) {
		args := make([]any, 0, 3+len(keys)+len(argv))
		args = append(args, name, script, len(keys))
		for _, k := range keys {
			args = append(args, k)
		}
		args = append(args, argv...)
		cmd := redis.NewCmd(ctx, args...)
		err := next(ctx, cmd)
		if err == nil {
			err = cmd.Err()
		}
		return cmd, err
	}
	cmd, err := call("evalsha", s.sha)
	if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		cmd, err = call("eval", s.src)
	}
	if err != nil {
		return nil, err
	}
	vals, err := cmd.Slice()
	if err != nil {
		return nil, err
	}
	if len(vals) != len(keys)/per {
		return nil, fmt.Errorf("idlepoll check: %d answers for %d keys", len(vals), len(keys))
	}
	flags := make([]bool, len(vals))
	for i, v := range vals {
		n, _ := asInt(v)
		flags[i] = n == 1
	}
	return flags, nil
}
