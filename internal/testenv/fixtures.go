package testenv

import (
	"context"
	"testing"

	"orderflow/internal/infra/operators"

	"github.com/redis/go-redis/v9"
)

// Redis is a client on a Redis DB of the test's own (RedisDB), closed
// when the test ends.
func Redis(t testing.TB) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: RedisAddr(), DB: RedisDB(t)})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// AdminContext carries an admin operator ("ann"), so the use cases write
// their audit entries.
func AdminContext() context.Context {
	return operators.WithOperator(context.Background(), operators.Operator{Name: "ann", Role: operators.RoleAdmin})
}
