package stock_test

import (
	"context"
	"testing"
	"time"

	"orderflow/internal/infra/stock"
	"orderflow/internal/testenv"
	"orderflow/svc"

	"github.com/redis/go-redis/v9"
)

// One Redis stall must take stock once. The production client (svc.NewRedis,
// MaxRetries 1) re-sends a command whose reply did not arrive within the read
// timeout; for the take script that reply is late, not lost — Redis already
// decremented the counter — so a blindly retried take counts one buyer twice
// and the counter ends below the ledger.
func TestTakeThroughAStalledReplyTakesOnce(t *testing.T) {
	ctx := context.Background()
	db := testenv.RedisDB(t)
	direct := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr(), DB: db})
	t.Cleanup(func() { direct.Close() })
	proxy := testenv.StartTCPProxy(t, testenv.RedisAddr())
	cfg := svc.Defaults()
	cfg.RedisAddr, cfg.RedisDB = proxy.Addr(), db
	rdb := svc.NewRedis(cfg)
	t.Cleanup(func() { rdb.Close() })
	c := stock.NewCounter(rdb)

	const pid = 7
	if err := direct.Set(ctx, stock.Key(pid), 10, 0).Err(); err != nil {
		t.Fatal(err)
	}
	// The first take loads the script, so the stalled call below is the
	// EVALSHA that runs it, not a NOSCRIPT answer.
	if out, err := c.Take(ctx, pid, "warm-up", 1); err != nil || out != stock.Taken {
		t.Fatalf("warm-up take: %v %v", out, err)
	}
	proxy.StallNextReply(rdb.(*redis.Client).Options().ReadTimeout + 500*time.Millisecond)
	out, err := c.Take(ctx, pid, "stalled", 1)
	t.Logf("take through a stalled reply: outcome %v, err %v", out, err)
	n, err := direct.Get(ctx, stock.Key(pid)).Int64()
	if err != nil {
		t.Fatal(err)
	}
	if n != 8 {
		t.Fatalf("after two takes of 1 from 10 the counter is %d, want 8: one stalled reply took %d", n, 9-n)
	}
}

// A gap is stuck only when the pass before saw the same one with the
// counter not moved since: a take between the passes (other takes in
// flight, the same number) is not, a SET from outside the scripts (a
// fault) does not move the counter, and no gap is never stuck.
func TestStuckGapNeedsAnUnmovedCounter(t *testing.T) {
	rdb := testenv.Redis(t)
	ctx := context.Background()
	c := stock.NewCounter(rdb)
	const p, ttl = 41, time.Minute
	note := func(ledger int64) bool {
		t.Helper()
		s, ok, err := c.Sample(ctx, p)
		if err != nil || !ok {
			t.Fatalf("sample: %v %v", ok, err)
		}
		stuck, err := c.StuckGap(ctx, p, s, ledger, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return stuck
	}
	rdb.Set(ctx, stock.Key(p), 7, 0)
	if note(10) {
		t.Error("a gap seen once is stuck")
	}
	if _, err := c.Take(ctx, p, "t1", 1); err != nil {
		t.Fatal(err)
	}
	if note(9) {
		t.Error("the same gap after a take is stuck")
	}
	if !note(9) {
		t.Error("the same gap with the counter unmoved is not stuck")
	}
	rdb.Set(ctx, stock.Key(p), 9, 0)
	for range 2 {
		if note(9) {
			t.Error("no gap is stuck")
		}
	}
}

// The sweep's rule (a create's short check keeps its own: order/shortcheck.go):
// a gap is a fault only if the look before saw the same one and the counter
// did not move between them.
func TestGapStuck(t *testing.T) {
	for _, c := range []struct {
		name      string
		prev, now stock.Gap
		want      bool
	}{
		{"same gap, counter unmoved", stock.Gap{Size: 3, Moves: 7}, stock.Gap{Size: 3, Moves: 7}, true},
		{"same gap above the ledger, unmoved", stock.Gap{Size: -2, Moves: 7}, stock.Gap{Size: -2, Moves: 7}, true},
		{"same gap, counter moved (other takes in flight)", stock.Gap{Size: 3, Moves: 7}, stock.Gap{Size: 3, Moves: 10}, false},
		{"another gap", stock.Gap{Size: 3, Moves: 7}, stock.Gap{Size: 2, Moves: 7}, false},
		{"no gap", stock.Gap{Moves: 7}, stock.Gap{Moves: 7}, false},
	} {
		if got := c.now.Stuck(c.prev); got != c.want {
			t.Errorf("%s: Stuck = %v, want %v", c.name, got, c.want)
		}
	}
}
