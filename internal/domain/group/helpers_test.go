package group_test

import (
	"context"
	"testing"
	"time"

	"orderflow/internal/domain/group"
	"orderflow/internal/infra/clock"
	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"gorm.io/gorm"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// fixture is the service on a fresh ledger, a Redis DB of its own and a
// fake clock.
type fixture struct {
	ctx   context.Context
	db    *gorm.DB
	store *model.Store
	rdb   redis.UniversalClient
	clock *clock.Fake
	svc   *group.Service
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	db := testenv.Ledger(t)
	rdb := testenv.Redis(t)
	f := &fixture{ctx: context.Background(), db: db, store: model.NewStore(db), rdb: rdb, clock: clock.NewFake(time.Now())}
	f.svc = group.New(group.Deps{Store: f.store, Redis: rdb, Clock: f.clock, Log: zap.NewNop()})
	return f
}

// user creates a user with a balance.
func (f *fixture) user(t *testing.T, name string, balance int64) int64 {
	t.Helper()
	u := &model.User{Name: name, TokenHash: "h-" + name, BalanceCents: balance, CreatedAt: f.clock.Now()}
	if err := f.store.InsertUser(f.ctx, u); err != nil {
		t.Fatal(err)
	}
	return u.ID
}

func (f *fixture) balance(t *testing.T, id int64) int64 {
	t.Helper()
	u, err := f.store.UserByID(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return u.BalanceCents
}

// group creates a group due in an hour, priced price, joined by members.
func (f *fixture) group(t *testing.T, price int64, members ...int64) *model.Group {
	t.Helper()
	owner := f.user(t, "owner-"+time.Now().Format("150405.000000000"), 0)
	g, err := f.svc.Create(f.ctx, owner, "a group", price, f.clock.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		if err := f.svc.Join(f.ctx, g.GroupNo, m); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

func (f *fixture) row(t *testing.T, groupNo string) *model.Group {
	t.Helper()
	g, err := f.store.GroupByNo(f.ctx, groupNo)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
