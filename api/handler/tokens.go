package handler

import (
	"context"
	"sync"
	"time"

	"orderflow/account"
)

// tokenTTL is how long a buyer token stays resolved in the process. A token
// belongs to one user for good (tokens are never reassigned), so the TTL only
// bounds memory.
const tokenTTL = time.Minute

// maxCachedTokens bounds the cache; past it, it starts over.
const maxCachedTokens = 10000

// tokenCache maps a bearer token's hash to its user id: one SELECT per buyer
// and minute instead of one per request. Unknown tokens are not cached, so a
// new user's token works at once.
type tokenCache struct {
	mu      sync.Mutex
	entries map[string]cachedToken
}

type cachedToken struct {
	userID int64
	until  time.Time
}

// userID resolves a bearer token to its user, from the cache when it holds it.
func (c *tokenCache) userID(ctx context.Context, accounts *account.Service, token string) (int64, error) {
	key, now := account.HashToken(token), time.Now()
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.userID, nil
	}
	u, err := accounts.Authenticate(ctx, token)
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= maxCachedTokens {
		c.entries = map[string]cachedToken{}
	}
	c.entries[key] = cachedToken{userID: u.ID, until: now.Add(tokenTTL)}
	c.mu.Unlock()
	return u.ID, nil
}
