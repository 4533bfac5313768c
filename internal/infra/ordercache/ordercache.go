// Package ordercache names the Redis keys an order's view is cached under
// and drops them. The order reader (internal/domain/order) fills and reads
// the keys; the ledger's after-commit work (svc) drops them for every order
// a transaction moved or whose refunds it changed. Both use these names, so
// a key written by one is the key dropped by the other.
package ordercache

import (
	"context"
	"strconv"
	"time"

	"orderflow/model"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// KeyNo is the key of an order's view by its number.
func KeyNo(orderNo string) string { return "cache:order:no:" + orderNo }

// KeyID is the key of an order's view by its ID.
func KeyID(id int64) string { return "cache:order:id:" + strconv.FormatInt(id, 10) }

// OpTimeout bounds cache work on a request path: with Redis down the answer
// must not wait on it (entries expire by TTL anyway).
const OpTimeout = 300 * time.Millisecond

// Drop deletes the orders' cached views, each key with its own DEL because
// they hash to different Cluster slots: one pipelined round trip on a
// standalone Redis (go-redis splits it per slot on a Cluster). Redis being
// down is logged, not returned: the entries expire by TTL.
func Drop(ctx context.Context, rdb redis.UniversalClient, log *zap.Logger, orders ...model.OrderRef) {
	DropAnd(ctx, rdb, log, nil, orders...)
}

// DropAnd is Drop with more commands (also, when not nil) in the same round
// trip, after the DELs.
func DropAnd(ctx context.Context, rdb redis.UniversalClient, log *zap.Logger, also func(redis.Pipeliner), orders ...model.OrderRef) {
	if len(orders) == 0 && also == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), OpTimeout)
	defer cancel()
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, o := range orders {
			p.Del(ctx, KeyNo(o.No))
			p.Del(ctx, KeyID(o.ID))
		}
		if also != nil {
			also(p)
		}
		return nil
	})
	if err != nil && len(orders) > 0 { // a lost wake-up costs latency only (idlepoll)
		nos := make([]string, len(orders))
		for i, o := range orders {
			nos[i] = o.No
		}
		log.Warn("order cache delete failed; entries expire by TTL", zap.Strings("order_nos", nos), zap.Error(err))
	}
}

// DropAll deletes every cached order view and returns how many keys went.
// After a Redis failover the new master may still hold views whose DEL it
// never received (lost with the writes the replica lagged behind on), so
// none of them can be trusted; the next reads fill again from the ledger.
func DropAll(ctx context.Context, rdb redis.UniversalClient) (int, error) {
	n := 0
	iter := rdb.Scan(ctx, 0, "cache:order:*", 1000).Iterator()
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := rdb.Del(ctx, batch...).Err()
		n += len(batch)
		batch = batch[:0]
		return err
	}
	for iter.Next(ctx) {
		if batch = append(batch, iter.Val()); len(batch) == 500 {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := iter.Err(); err != nil {
		return n, err
	}
	return n, flush()
}
