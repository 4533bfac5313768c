package order

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"orderflow/internal/domain/apperr"
	"orderflow/model"
)

// MaxIdempotencyKey is the longest Idempotency-Key accepted, in bytes.
const MaxIdempotencyKey = 255

// Idempotency-Key errors.
var (
	ErrBadIdempotencyKey = apperr.New(apperr.Invalid, "invalid_idempotency_key",
		"Idempotency-Key must be 1 to 255 bytes of visible ASCII (0x21-0x7E)")
	ErrIdempotencyKeyReused = apperr.New(apperr.Unprocessable, "idempotency_key_reused",
		"this Idempotency-Key was used for another order (product_id or quantity differ); use a new key")
	errKeyBusy = apperr.New(apperr.Conflict, "idempotency_key_in_use",
		"a create with this Idempotency-Key is still in progress; retry shortly")
)

// ValidIdempotencyKey reports whether key is 1..MaxIdempotencyKey bytes of
// visible ASCII. Anything else is refused before it reaches the ledger: a
// byte that is not UTF-8 would fail the insert, a server error for a
// client's mistake.
func ValidIdempotencyKey(key string) bool {
	if len(key) < 1 || len(key) > MaxIdempotencyKey {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return false
		}
	}
	return true
}

// requestHash is a create's fingerprint: the fields that define the order,
// not the body's bytes, so spacing and field order do not make a retry
// "another request". The buyer is not in it: keys are per buyer already.
func requestHash(req CreateRequest) string {
	sum := sha256.Sum256([]byte("order.create/v1\nproduct_id=" + strconv.FormatInt(req.ProductID, 10) +
		"\nquantity=" + strconv.Itoa(req.Quantity)))
	return hex.EncodeToString(sum[:])
}

// keyWait bounds how long a retry waits for the create holding its key;
// a reservation older than keyLapse belonged to a process that died.
const (
	keyWait  = 10 * time.Second
	keyLapse = time.Minute
)

// reserveKey reserves the buyer's key for this create (nil, nil) or returns
// the order an earlier create with the key made. A key held for another
// fingerprint is ErrIdempotencyKeyReused, with nothing written.
func (s *Service) reserveKey(ctx context.Context, req CreateRequest) (*model.Order, error) {
	hash := requestHash(req)
	deadline := time.Now().Add(keyWait)
	for {
		now := s.clock.Now()
		if err := s.store.ExpireIdempotencyKey(ctx, req.UserID, req.IdempotencyKey, now.Add(-s.set.IdempotencyTTL)); err != nil {
			return nil, fmt.Errorf("create order: idempotency: %w", err)
		}
		reserved, err := s.store.ReserveIdempotencyKey(ctx, req.UserID, req.IdempotencyKey, hash, now)
		if err != nil {
			return nil, fmt.Errorf("create order: idempotency: %w", err)
		}
		if reserved {
			return nil, nil
		}
		k, err := s.store.IdempotencyKeyFor(ctx, req.UserID, req.IdempotencyKey, now.Add(-s.set.IdempotencyTTL))
		switch {
		case err == nil && k.RequestHash != "" && k.RequestHash != hash:
			return nil, ErrIdempotencyKeyReused
		case err == nil && k.OrderID > 0:
			return s.store.OrderByID(ctx, k.OrderID)
		case err != nil && !errors.Is(err, model.ErrNotFound):
			return nil, fmt.Errorf("create order: idempotency: %w", err)
		case err == nil:
			// Reserved, in progress. A reservation past keyLapse is orphaned.
			if err := s.store.ExpireIdempotencyKey(ctx, req.UserID, req.IdempotencyKey, now.Add(-keyLapse)); err != nil {
				return nil, err
			}
		}
		if time.Now().After(deadline) {
			return nil, errKeyBusy
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
