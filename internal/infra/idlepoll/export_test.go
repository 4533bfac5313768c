package idlepoll

import "github.com/redis/go-redis/v9"

// Recognise names what the hook takes cmd for: "dequeue <queue>",
// "forward <set key>", or "" (passed through untouched).
func Recognise(cmd redis.Cmder) string {
	switch c := recognise(cmd); c.kind {
	case dequeueCall:
		return "dequeue " + c.queue
	case forwardCall:
		return "forward " + c.key
	}
	return ""
}

// Waiting reports whether a round is held for an announcement now.
func (h *Hook) Waiting() bool { return h.waiting.Load() }
