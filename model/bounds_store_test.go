package model_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/model"
)

// errRefused stands for any error: a refusal that is no bound of the API's.
var errRefused = errors.New("any error")

// stores are a fresh migrated ledger on each backend: MariaDB and SQLite
// take different paths through the wallet and subscription statements.
func stores(t *testing.T) map[string]*bundle {
	t.Helper()
	lite, err := model.OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), model.PoolConfig{MaxOpen: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := lite.DB(); err == nil {
			sqlDB.Close()
		}
	})
	if _, err := model.Migrate(context.Background(), lite); err != nil {
		t.Fatal(err)
	}
	return map[string]*bundle{"mariadb": setup(t), "sqlite": {store: model.NewStore(lite), db: lite, ctx: context.Background()}}
}

// eachStore runs test as a subtest on each of stores' backends, its clock
// (bd.now) set.
func eachStore(t *testing.T, test func(t *testing.T, bd *bundle)) {
	t.Helper()
	for name, bd := range stores(t) {
		if bd.now.IsZero() {
			bd.now = time.Now().UTC().Truncate(time.Millisecond)
		}
		t.Run(name, func(t *testing.T) { test(t, bd) })
	}
}

// TestWalletAndSubscriptionBounds: a credit that would take a wallet past
// MaxBalanceCents and an extension that would end a subscription past
// MaxTime are refused with their bound, and the transaction they ran in
// leaves the user and the wallet ledger as they were.
func TestWalletAndSubscriptionBounds(t *testing.T) {
	for name, bd := range stores(t) {
		store := bd.store
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			now := time.Now().UTC().Truncate(time.Millisecond)
			nearEnd := time.Date(9999, 6, 1, 0, 0, 0, 0, time.UTC)
			u := &model.User{Name: "full", TokenHash: "h-" + name, BalanceCents: model.MaxBalanceCents - 10, CreatedAt: now}
			if err := store.InsertUser(ctx, u); err != nil {
				t.Fatal(err)
			}
			year := 365 * 24 * time.Hour
			for _, tc := range []struct {
				name string
				do   func(tx *model.Store) error
				want error // nil: accepted; errRefused: any error
			}{
				{"credit at the wallet's bound", func(tx *model.Store) error {
					_, err := tx.CreditWallet(ctx, u.ID, "credit", "at-"+name, 10, now)
					return err
				}, nil},
				{"credit past the wallet's bound", func(tx *model.Store) error {
					_, err := tx.CreditWallet(ctx, u.ID, "credit", "over-"+name, 1, now)
					return err
				}, model.ErrWalletFull},
				{"credit past the int64 headroom", func(tx *model.Store) error {
					_, err := tx.CreditWallet(ctx, u.ID, "credit", "huge-"+name, model.MaxBalanceCents+1, now)
					return err
				}, errRefused},
				{"subscription extended", func(tx *model.Store) error {
					return tx.ExtendSubscription(ctx, u.ID, year, now)
				}, nil},
				{"subscription past 9999", func(tx *model.Store) error {
					if err := tx.ExtendSubscription(ctx, u.ID, year, now); err != nil {
						return err
					}
					return errors.New("extended past MaxTime")
				}, model.ErrSubscriptionEnd},
			} {
				t.Run(tc.name, func(t *testing.T) {
					if tc.name == "subscription past 9999" {
						testenv.Exec(t, bd.db, `UPDATE users SET subscription_expires_at = ? WHERE id = ?`, nearEnd, u.ID)
					}
					before, err := store.UserByID(ctx, u.ID)
					if err != nil {
						t.Fatal(err)
					}
					err = store.InTx(ctx, tc.do)
					switch {
					case tc.want == nil && err != nil:
						t.Fatalf("refused: %v", err)
					case errors.Is(tc.want, errRefused) && err == nil,
						tc.want != nil && !errors.Is(tc.want, errRefused) && !errors.Is(err, tc.want):
						t.Fatalf("err = %v, want %v", err, tc.want)
					case tc.want == nil:
						return
					}
					after, err := store.UserByID(ctx, u.ID)
					if err != nil {
						t.Fatal(err)
					}
					if userState(after) != userState(before) {
						t.Errorf("user changed by a refused write: %s, was %s", userState(after), userState(before))
					}
				})
			}
			got, err := store.UserByID(ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.BalanceCents != model.MaxBalanceCents {
				t.Errorf("balance = %d, want %d (only the credit at the bound applied)", got.BalanceCents, model.MaxBalanceCents)
			}
			if got.SubscriptionExpiresAt == nil || !got.SubscriptionExpiresAt.Equal(nearEnd) {
				t.Errorf("subscription ends %v, want %v (the refused extension left it)", got.SubscriptionExpiresAt, nearEnd)
			}
		})
	}
}

func userState(u *model.User) string {
	sub := "-"
	if u.SubscriptionExpiresAt != nil {
		sub = u.SubscriptionExpiresAt.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("balance=%d sub=%s", u.BalanceCents, sub)
}
