package account_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"orderflow/internal/domain/account"
	"orderflow/internal/domain/bounds"
	"orderflow/internal/testenv"

	"gorm.io/gorm"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// newService is the account service on a fresh, migrated MariaDB database,
// with an admin in the context so the audit entries are written.
func newService(t *testing.T) (*account.Service, *gorm.DB, context.Context) {
	t.Helper()
	b := testenv.NewBase(t, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	return account.New(b.Store, b.Clock), b.DB, testenv.AdminContext()
}

// A user's name is 1..128 characters once trimmed and the opening balance
// 0..MaxCents; a refusal names its field and writes nothing, an accepted
// user is written with its audit entry.
func TestCreateBounds(t *testing.T) {
	t.Parallel()
	svc, db, ctx := newService(t)
	var users int64
	for _, c := range []struct {
		name, user string
		balance    int64
		code       string // "" accepted
	}{
		{"plain", "ann", 0, ""},
		{"128 characters, the largest balance", strings.Repeat("a", 128), bounds.MaxCents, ""},
		{"trimmed to a name", "  bob  ", 1, ""},
		{"empty", "", 0, "invalid_name"},
		{"only spaces", "   ", 0, "invalid_name"},
		{"129 characters", strings.Repeat("a", 129), 0, "invalid_name"},
		{"negative balance", "carl", -1, "invalid_balance"},
		{"balance past the bound", "carl", bounds.MaxCents + 1, "invalid_balance"},
	} {
		t.Run(c.name, func(t *testing.T) {
			created, err := svc.Create(ctx, c.user, c.balance)
			if got := testenv.InvalidCode(t, err); got != c.code {
				t.Fatalf("got %v (code %q), want %q", err, got, c.code)
			}
			if c.code == "" {
				users++
				u, err := svc.Get(ctx, created.ID)
				if err != nil || u.Name != strings.TrimSpace(c.user) || u.BalanceCents != c.balance {
					t.Errorf("stored %+v, %v; want %q with %d cents", u, err, strings.TrimSpace(c.user), c.balance)
				}
			}
			if n := testenv.Count(t, db, `SELECT COUNT(*) FROM users`); n != users {
				t.Errorf("%d users, want %d", n, users)
			}
			if n := testenv.Count(t, db, `SELECT COUNT(*) FROM audit_entries WHERE action = 'user_create'`); n != users {
				t.Errorf("%d audit entries, want %d", n, users)
			}
		})
	}
}

// A token is shown once and only its hash is stored, so a database dump
// hands out no credential; the token finds its own user, and a missing,
// unknown or hashed-as-stored token finds none.
func TestTokens(t *testing.T) {
	t.Parallel()
	svc, db, ctx := newService(t)
	ann, err := svc.Create(ctx, "ann", 0)
	if err != nil {
		t.Fatal(err)
	}
	bob, err := svc.Create(ctx, "bob", 0)
	if err != nil {
		t.Fatal(err)
	}
	if ann.Token == bob.Token || !strings.HasPrefix(ann.Token, "u_") {
		t.Fatalf("tokens %q and %q: want two different u_ tokens", ann.Token, bob.Token)
	}
	if n := testenv.Count(t, db, `SELECT COUNT(*) FROM users WHERE token_hash = ?`, ann.Token); n != 0 {
		t.Error("the token itself is stored")
	}
	if n := testenv.Count(t, db, `SELECT COUNT(*) FROM users WHERE token_hash = ?`, account.HashToken(ann.Token)); n != 1 {
		t.Errorf("%d users hold the token's hash, want 1", n)
	}
	for _, c := range []struct {
		name, token string
		id          int64
	}{
		{"ann's", ann.Token, ann.ID},
		{"bob's", bob.Token, bob.ID},
		{"ann's again (kept in the process)", ann.Token, ann.ID},
		{"missing", "", 0},
		{"unknown", "u_nobody", 0},
		{"the stored hash", account.HashToken(ann.Token), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			id, err := svc.UserID(ctx, c.token)
			if c.id == 0 {
				if !errors.Is(err, account.ErrBadToken) {
					t.Errorf("UserID: %d, %v; want ErrBadToken", id, err)
				}
				return
			}
			if err != nil || id != c.id {
				t.Errorf("UserID: %d, %v; want %d", id, err, c.id)
			}
		})
	}
	if _, err := svc.Get(ctx, bob.ID+100); !errors.Is(err, account.ErrNotFound) {
		t.Errorf("Get of an unknown user: %v, want ErrNotFound", err)
	}
}
