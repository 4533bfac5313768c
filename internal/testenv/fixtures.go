package testenv

import (
	"context"
	"testing"
	"time"

	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/operators"
	"orderflow/model"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"
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

// Base is what a use case's unit test builds its service on: a fresh,
// migrated ledger (Ledger), the store on it and a fake clock. A package's
// own test bundle embeds it beside its service and whatever else it needs
// (a Redis DB is not in it: the test reserves one with Redis only if it
// uses one).
type Base struct {
	DB    *gorm.DB
	Store *model.Store
	Clock *clock.Fake
}

// NewBase is a Base whose clock reads at.
func NewBase(t testing.TB, at time.Time) Base {
	t.Helper()
	db := Ledger(t)
	return Base{DB: db, Store: model.NewStore(db), Clock: clock.NewFake(at)}
}
