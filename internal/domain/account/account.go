// Package account manages users: creation by the admin, bearer tokens, and
// reading a user's wallet and subscription.
package account

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/domain/bounds"
	"orderflow/internal/domain/trail"
	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/ttlcache"
	"orderflow/model"
)

// Service runs the account use cases.
type Service struct {
	store  *model.Store
	clock  clock.Clock
	tokens *ttlcache.Cache[string, int64] // token hash → user id
}

// New returns the account service.
func New(store *model.Store, c clock.Clock) *Service {
	return &Service{store: store, clock: c, tokens: ttlcache.New[string, int64](time.Minute, 10000)}
}

// Errors.
var (
	ErrNotFound = apperr.New(apperr.NotFound, "user_not_found", "no such user")
	ErrBadName  = apperr.New(apperr.Invalid, "invalid_name", "name must be 1..128 characters")
	ErrBadToken = apperr.New(apperr.Unauthorized, "unauthorized", "missing or unknown bearer token")
)

// Created is a new user and the token they act with; the token is shown once.
type Created struct {
	ID    int64  `json:"id"`
	Token string `json:"token"`
}

// Create adds a user with an opening balance.
func (s *Service) Create(ctx context.Context, name string, balanceCents int64) (*Created, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 128 {
		return nil, ErrBadName
	}
	if err := bounds.CheckOpeningBalance(balanceCents); err != nil {
		return nil, err
	}
	token := newToken()
	u := &model.User{Name: name, TokenHash: HashToken(token), BalanceCents: balanceCents, CreatedAt: s.clock.Now()}
	err := s.store.InTx(ctx, func(tx *model.Store) error {
		if err := tx.InsertUser(ctx, u); err != nil {
			return err
		}
		return trail.Record(ctx, tx, u.CreatedAt, trail.UserCreate, trail.UserObject(u.ID), trail.Detail{"name": name, "balance_cents": balanceCents})
	})
	if err != nil {
		return nil, fmt.Errorf("create user: %w", err)
	}
	return &Created{ID: u.ID, Token: token}, nil
}

// Get loads a user.
func (s *Service) Get(ctx context.Context, id int64) (*model.User, error) {
	u, err := s.store.UserByID(ctx, id)
	return model.Found(u, err, ErrNotFound, "load user %d", id)
}

// UserID returns the id of the user a bearer token belongs to. A token
// belongs to one user for good, so the answer is kept in the process for a
// minute: one SELECT per buyer and minute instead of one per request.
func (s *Service) UserID(ctx context.Context, token string) (int64, error) {
	key, now := HashToken(token), s.clock.Now()
	if id, ok := s.tokens.Get(key, now); ok {
		return id, nil
	}
	u, err := s.Authenticate(ctx, token)
	if err != nil {
		return 0, err
	}
	s.tokens.Put(key, u.ID, now)
	return u.ID, nil
}

// Authenticate returns the user a bearer token belongs to.
func (s *Service) Authenticate(ctx context.Context, token string) (*model.User, error) {
	if token == "" {
		return nil, ErrBadToken
	}
	u, err := s.store.UserByTokenHash(ctx, HashToken(token))
	return model.Found(u, err, ErrBadToken, "authenticate")
}

// HashToken is how a token is stored: only its SHA-256, so a database dump
// does not hand out credentials.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func newToken() string {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand: " + err.Error())
	}
	return "u_" + hex.EncodeToString(b[:])
}
