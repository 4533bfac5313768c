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

// A counter below the ledger is a fault only when the pass before saw the
// same gap with the counter not moved since: a take between the passes
// (other takes in flight, the same number) is not, a SET from outside the
// scripts (a fault) does not move the counter, and no gap is never one. A
// counter above the ledger is one at once, unless a script moved it while
// the ledger was read.
func TestGapFaultReadsTheMovesAfterTheLedger(t *testing.T) {
	rdb := testenv.Redis(t)
	ctx := context.Background()
	c := stock.NewCounter(rdb)
	const p, ttl = 41, time.Minute
	note := func(ledger int64, meanwhile func()) bool {
		t.Helper()
		s, ok, err := c.Sample(ctx, p)
		if err != nil || !ok {
			t.Fatalf("sample: %v %v", ok, err)
		}
		if meanwhile != nil {
			meanwhile() // while the pass reads the ledger
		}
		fault, err := c.GapFault(ctx, p, s, ledger, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return fault
	}
	take := func(tok string) func() {
		return func() {
			if _, err := c.Take(ctx, p, tok, 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	rdb.Set(ctx, stock.Key(p), 7, 0)
	if note(10, nil) {
		t.Error("a gap below the ledger seen once is a fault")
	}
	take("t1")()
	if note(9, nil) {
		t.Error("the same gap below the ledger after a take is a fault")
	}
	if !note(9, nil) {
		t.Error("the same gap below the ledger, the counter unmoved, is no fault")
	}
	rdb.Set(ctx, stock.Key(p), 9, 0)
	for range 2 {
		if note(9, nil) {
			t.Error("no gap is a fault")
		}
	}
	rdb.Set(ctx, stock.Key(p), 12, 0)
	if note(10, take("t2")) {
		t.Error("a counter above the ledger that moved while the ledger was read is a fault")
	}
	if !note(10, nil) {
		t.Error("a counter above the ledger, unmoved while the ledger was read, is no fault")
	}
}

// The sweep's rule (a create's short check keeps its own: order/shortcheck.go).
func TestGapFault(t *testing.T) {
	for _, c := range []struct {
		name      string
		prev, now stock.Gap
		want      bool
	}{
		{"below, same gap, counter unmoved", stock.Gap{Size: 3, Moves: 7}, stock.Gap{Size: 3, Moves: 7}, true},
		{"below, same gap, counter moved (other takes in flight)", stock.Gap{Size: 3, Moves: 7}, stock.Gap{Size: 3, Moves: 10, Still: true}, false},
		{"below, another gap", stock.Gap{Size: 3, Moves: 7}, stock.Gap{Size: 2, Moves: 7, Still: true}, false},
		{"below, seen once, still", stock.Gap{}, stock.Gap{Size: 3, Moves: 7, Still: true}, false},
		{"above, seen once, still", stock.Gap{}, stock.Gap{Size: -2, Moves: 7, Still: true}, true},
		{"above, moved while the ledger was read", stock.Gap{}, stock.Gap{Size: -2, Moves: 7}, false},
		{"above, same gap, unmoved since the pass before", stock.Gap{Size: -2, Moves: 7}, stock.Gap{Size: -2, Moves: 7}, true},
		{"no gap", stock.Gap{Moves: 7}, stock.Gap{Moves: 7, Still: true}, false},
	} {
		if got := c.now.Fault(c.prev); got != c.want {
			t.Errorf("%s: Fault = %v, want %v", c.name, got, c.want)
		}
	}
}
