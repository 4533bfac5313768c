package group_test

import (
	"context"
	"testing"
	"time"

	"orderflow/internal/domain/group"
	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// fixture is the service on a fresh ledger, a Redis DB of its own and a
// fake clock.
type fixture struct {
	testenv.Base
	ctx context.Context
	rdb redis.UniversalClient
	svc *group.Service
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	b, rdb := testenv.NewBase(t, time.Now()), testenv.Redis(t)
	return &fixture{Base: b, ctx: context.Background(), rdb: rdb,
		svc: group.New(group.Deps{Store: b.Store, Redis: rdb, Clock: b.Clock, Log: zap.NewNop()})}
}

// user creates a user with a balance.
func (f *fixture) user(t *testing.T, name string, balance int64) int64 {
	t.Helper()
	u := &model.User{Name: name, TokenHash: "h-" + name, BalanceCents: balance, CreatedAt: f.Clock.Now()}
	if err := f.Store.InsertUser(f.ctx, u); err != nil {
		t.Fatal(err)
	}
	return u.ID
}

func (f *fixture) balance(t *testing.T, id int64) int64 {
	t.Helper()
	u, err := f.Store.UserByID(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return u.BalanceCents
}

// group creates a group due in an hour, priced price, joined by members.
func (f *fixture) group(t *testing.T, price int64, members ...int64) *model.Group {
	t.Helper()
	owner := f.user(t, "owner-"+time.Now().Format("150405.000000000"), 0)
	g, err := f.svc.Create(f.ctx, owner, "a group", price, f.Clock.Now().Add(time.Hour))
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
	g, err := f.Store.GroupByNo(f.ctx, groupNo)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
