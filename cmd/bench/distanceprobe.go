package main

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// DelayProbe is the delaying proxy's precision: round trips the bench
// times itself, one connection each, to MariaDB (SELECT 1) and Redis (PING)
// — direct, through a proxy with no delay (the hop alone) and through one
// with the distance's delay — taken in turn so a change of load hits all
// three alike.
type DelayProbe struct {
	Rounds int        `json:"rounds"`
	SQL    ProbeTimes `json:"select_1"`
	Redis  ProbeTimes `json:"redis_ping"`
}

// ProbeTimes are one kind of round trip's times, in milliseconds.
type ProbeTimes struct {
	DirectMs     float64 `json:"direct_mean_ms"`
	HopMs        float64 `json:"proxy_no_delay_mean_ms"`
	DelayedMs    float64 `json:"proxy_delayed_mean_ms"`
	DelayedP99Ms float64 `json:"proxy_delayed_p99_ms"`
	AddedMs      float64 `json:"added_mean_ms"` // delayed − direct: the distance a client sees
}

// probeWays are direct, the bare hop and the delayed proxy, in that order.
const probeWays = 3

// rttProbe holds a connection to MariaDB and one to Redis for each of the
// three ways (direct, the bare hop, the delayed proxy), and what they timed.
type rttProbe struct {
	px     []*proxy
	dbs    [probeWays]*sql.DB
	rdbs   [probeWays]*redis.Client
	sqlT   [probeWays][]time.Duration
	redisT [probeWays][]time.Duration
}

func newRTTProbe(ctx context.Context, p Params, rtt time.Duration) (*rttProbe, error) {
	mysqlAddr, err := mysqlHostPort(p.MySQL)
	if err != nil {
		return nil, err
	}
	pr := &rttProbe{}
	sqlVia, redisVia := []string{p.MySQL}, []string{p.RedisAddr}
	for _, d := range []time.Duration{0, rtt} {
		ps, err := startProxy(mysqlAddr, serveMySQL, newRoundTripCounter(), d)
		if err != nil {
			pr.close()
			return nil, err
		}
		pr.px = append(pr.px, ps)
		pd, err := startProxy(p.RedisAddr, serveRedis, newRoundTripCounter(), d)
		if err != nil {
			pr.close()
			return nil, err
		}
		pr.px = append(pr.px, pd)
		sqlVia, redisVia = append(sqlVia, ps.route(p.MySQL)), append(redisVia, pd.addr())
	}
	for i := range probeWays {
		if pr.dbs[i], err = openLedger(ctx, sqlVia[i], "", 1); err != nil {
			pr.close()
			return nil, err
		}
		pr.rdbs[i] = redis.NewClient(&redis.Options{Addr: redisVia[i], PoolSize: 1, MinIdleConns: 1})
	}
	return pr, nil
}

// round times one SELECT 1 and one PING each of the three ways.
func (pr *rttProbe) round(ctx context.Context) error {
	for i := range probeWays {
		var one int
		t := time.Now()
		if err := pr.dbs[i].QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
			return err
		}
		pr.sqlT[i] = append(pr.sqlT[i], time.Since(t))
		t = time.Now()
		if err := pr.rdbs[i].Ping(ctx).Err(); err != nil {
			return err
		}
		pr.redisT[i] = append(pr.redisT[i], time.Since(t))
	}
	return nil
}

// rounds times n rounds back to back after a few unrecorded ones (the
// pools' first connections).
func (pr *rttProbe) rounds(ctx context.Context, n int) (DelayProbe, error) {
	for range 10 {
		if err := pr.round(ctx); err != nil {
			return DelayProbe{}, err
		}
	}
	pr.sqlT, pr.redisT = [probeWays][]time.Duration{}, [probeWays][]time.Duration{}
	for range n {
		if err := pr.round(ctx); err != nil {
			return DelayProbe{}, err
		}
	}
	return pr.result(), nil
}

// every times a round each interval until stop is closed, then returns
// what it saw (under load: the distance as the product saw it).
func (pr *rttProbe) every(ctx context.Context, interval time.Duration, stop <-chan struct{}) (DelayProbe, error) {
	pr.sqlT, pr.redisT = [probeWays][]time.Duration{}, [probeWays][]time.Duration{}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return pr.result(), nil
		case <-ctx.Done():
			return pr.result(), ctx.Err()
		case <-t.C:
			if err := pr.round(ctx); err != nil && !errors.Is(err, context.Canceled) {
				return pr.result(), err
			}
		}
	}
}

func (pr *rttProbe) result() DelayProbe {
	times := func(s [probeWays][]time.Duration) ProbeTimes {
		far := percentiles(s[2])
		pt := ProbeTimes{DirectMs: meanMs(s[0]), HopMs: meanMs(s[1]), DelayedMs: meanMs(s[2]), DelayedP99Ms: far.P99}
		pt.AddedMs = round3(pt.DelayedMs - pt.DirectMs)
		return pt
	}
	return DelayProbe{Rounds: len(pr.sqlT[0]), SQL: times(pr.sqlT), Redis: times(pr.redisT)}
}

func (pr *rttProbe) close() {
	for i := range probeWays {
		if pr.dbs[i] != nil {
			pr.dbs[i].Close()
		}
		if pr.rdbs[i] != nil {
			pr.rdbs[i].Close()
		}
	}
	for _, p := range pr.px {
		p.close()
	}
}

// meanMs is a sample's mean in milliseconds, to the microsecond.
func meanMs(s []time.Duration) float64 {
	if len(s) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return round3(float64(sum) / float64(len(s)) / 1e6)
}
