package svc

import (
	"context"
	"strings"
	"time"

	"orderflow/internal/infra/ordercache"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// watchFailovers listens on every sentinel for the master's switch and then
// drops the whole order-view cache (ordercache.DropAll): a failover loses
// the writes the replica had not received, after-commit DELs of cached
// views among them, and a view resurrected that way would be served until
// its TTL. Tasks and stock counters lost the same way are healed by the
// sweep and the stock self-check; the cache has no such pass, hence this.
// Each sentinel reports the switch, so the drop may run up to three times:
// it is idempotent.
func watchFailovers(ctx context.Context, c Config, rdb redis.UniversalClient, log *zap.Logger) {
	for _, addr := range strings.Split(c.RedisAddr, ",") {
		go func() {
			sc := redis.NewSentinelClient(&redis.Options{Addr: strings.TrimSpace(addr), Password: c.RedisPassword,
				DialTimeout: 500 * time.Millisecond})
			defer sc.Close()
			sub := sc.Subscribe(ctx, "+switch-master")
			defer sub.Close()
			ch := sub.Channel()
			for {
				select {
				case <-ctx.Done():
					return
				case m, ok := <-ch:
					if !ok {
						return
					}
					if strings.HasPrefix(m.Payload, c.RedisMaster+" ") {
						dropAfterFailover(ctx, rdb, log.With(zap.String("sentinel", addr), zap.String("switch", m.Payload)))
					}
				}
			}
		}()
	}
}

// dropAfterFailover drops the cache now and twice more a little later: our
// client may still be reconnecting to the new master at first.
func dropAfterFailover(ctx context.Context, rdb redis.UniversalClient, log *zap.Logger) {
	total := 0
	var lastErr error
	for _, wait := range []time.Duration{0, 500 * time.Millisecond, 2 * time.Second} {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		n, err := ordercache.DropAll(ctx, rdb)
		total, lastErr = total+n, err
	}
	log.Warn("redis master switched; order-view cache dropped", zap.Int("keys", total), zap.Error(lastErr))
}
