package ordercache_test

import (
	"context"
	"fmt"
	"testing"

	"orderflow/internal/infra/ordercache"
	"orderflow/internal/testenv"

	"github.com/redis/go-redis/v9"
)

// After a failover every cached view goes, in batches past one SCAN page,
// and nothing else in the DB is touched (a stock counter, a task key).
func TestDropAllDropsEveryViewAndNothingElse(t *testing.T) {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr(), DB: testenv.RedisDB(t)})
	t.Cleanup(func() { rdb.Close() })
	const views = 1200
	for i := range views {
		if err := rdb.Set(ctx, ordercache.KeyID(int64(i)), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.Set(ctx, ordercache.KeyNo(fmt.Sprintf("O%d", i)), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	others := []string{"stock:7", "asynq:{default}:t:abc"}
	for _, k := range others {
		if err := rdb.Set(ctx, k, "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	n, err := ordercache.DropAll(ctx, rdb)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2*views {
		t.Errorf("dropped %d keys, want %d", n, 2*views)
	}
	if left, _ := rdb.Keys(ctx, "cache:order:*").Result(); len(left) != 0 {
		t.Errorf("%d views left, e.g. %s", len(left), left[0])
	}
	for _, k := range others {
		if rdb.Exists(ctx, k).Val() != 1 {
			t.Errorf("%s was dropped too", k)
		}
	}
}
