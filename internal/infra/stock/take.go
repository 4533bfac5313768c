package stock

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// TakeMarkerTTL is how long a take's token marker lives. It must outlast the
// client's re-sends of one call (read timeout × (MaxRetries+1) plus backoff:
// seconds); a give-back after it expired still gives back once, since only
// the create that took calls it.
const TakeMarkerTTL = time.Minute

// TakeMarkerKey marks that the take with this token reached the counter
// ("taken"), or was given back ("returned"). Same hash tag as the counter.
func TakeMarkerKey(productID int64, token string) string {
	return Key(productID) + ":take:" + token
}

// takeScript decrements a counter only if it holds enough (or, forced, in
// any case), once per token: a re-sent take finds its marker and answers
// Taken without taking again.
//
//	KEYS[1] the product's stock counter
//	KEYS[2] the take's marker (same hash tag)
//	KEYS[3] the counter's moves (same hash tag)
//	ARGV[1] quantity wanted (positive integer)
//	ARGV[2] marker lifetime in seconds
//	ARGV[3] "1" to take even below zero (the ledger said there is stock)
//	returns 1 if this token's take is done (now or by an earlier send),
//	        -1 if the counter is missing, 0 if it holds less than ARGV[1]
var takeScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return 1 end
local v = redis.call('GET', KEYS[1])
if not v then return -1 end
if ARGV[3] ~= '1' and tonumber(v) < tonumber(ARGV[1]) then return 0 end
redis.call('DECRBY', KEYS[1], ARGV[1])
redis.call('INCR', KEYS[3])
redis.call('SET', KEYS[2], 'taken', 'EX', ARGV[2])
return 1
`)

// putScript gives a take back once per token, and never creates a counter:
// a missing counter is rebuilt from the database, which already counts what
// is given back.
//
//	KEYS[1] the product's stock counter
//	KEYS[2] the take's marker (same hash tag)
//	KEYS[3] the counter's moves (same hash tag)
//	ARGV[1] quantity to add back
//	ARGV[2] marker lifetime in seconds
//	returns 1 if given back now, 0 if an earlier send did, -1 if the counter
//	is missing
var putScript = redis.NewScript(`
if redis.call('GET', KEYS[2]) == 'returned' then return 0 end
redis.call('SET', KEYS[2], 'returned', 'EX', ARGV[2])
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('INCR', KEYS[3])
return 1
`)

// Take atomically decrements the product's counter by qty if it holds
// enough. token (unique per create) makes a re-sent call a no-op.
func (c *Counter) Take(ctx context.Context, productID int64, token string, qty int) (Outcome, error) {
	return c.take(ctx, productID, token, qty, "0")
}

// TakeAnyway decrements the counter by qty even below zero (never Short):
// for a create the ledger let through while the counter was short, so that
// the counter keeps moving with the ledger and a restore still pending for
// it does not leave it above the ledger afterwards.
func (c *Counter) TakeAnyway(ctx context.Context, productID int64, token string, qty int) (Outcome, error) {
	return c.take(ctx, productID, token, qty, "1")
}

func (c *Counter) take(ctx context.Context, productID int64, token string, qty int, force string) (Outcome, error) {
	n, err := takeScript.Run(ctx, c.rdb, []string{Key(productID), TakeMarkerKey(productID, token), MovesKey(productID)},
		qty, int(TakeMarkerTTL.Seconds()), force).Int()
	if err != nil {
		return Missing, err
	}
	return Outcome(n), nil
}

// Put gives back what the take with token took, once, to an existing counter.
// Call it only for a take that answered Taken.
func (c *Counter) Put(ctx context.Context, productID int64, token string, qty int) error {
	return putScript.Run(ctx, c.rdb, []string{Key(productID), TakeMarkerKey(productID, token), MovesKey(productID)},
		qty, int(TakeMarkerTTL.Seconds())).Err()
}
