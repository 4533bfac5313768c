// Package order is the order aggregate's use cases — create, pay, activate,
// recover, read, operator retry — called by the API and the queue handlers
// alike. Rules live here; SQL lives in model.
package order

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/metrics"
	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/stock"
	"orderflow/internal/infra/tasks"
	"orderflow/internal/infra/ttlcache"
	"orderflow/model"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// Settings are the order rules' knobs.
type Settings struct {
	OrderTTL       time.Duration
	ClaimTimeout   time.Duration
	MaxPending     int
	MaxAttempts    int
	CacheTTL       time.Duration
	IdempotencyTTL time.Duration
	// ActivateBatch is the most activate tasks a worker runs as one batch
	// (claim, delivery and finalize shared); 1 runs each order alone.
	ActivateBatch int
	// WorkerID names this process on the claims it makes (its lease in
	// the fleet registry): a survivor releases a lost worker's claims.
	WorkerID string
}

// activateLeaders is how many activation batches one process runs at once
// (while one waits for the database the next one gathers), and
// activatePatience the longest a task waits for them before it leads a
// batch of its own (batcher.go).
const (
	activateLeaders  = 2
	activatePatience = 100 * time.Millisecond
)

// Service runs the order use cases.
type Service struct {
	store    *model.Store
	rdb      redis.UniversalClient
	stock    *stock.Counter
	clock    clock.Clock
	log      *zap.Logger
	metrics  *metrics.Metrics
	set      Settings
	products *ttlcache.Cache[int64, model.Product]
	pay      *pay.Registry
	// shortChecks rate-limits the ledger checks of short stock counters.
	shortChecks *shortChecks
	// counterBuilds runs one build of a missing stock counter at a time.
	counterBuilds *counterBuilds
	// batcher gathers concurrent activate tasks into batches, closer the
	// close tasks (nil: off).
	batcher, closer *batcher
	// created remembers the orders this process created, for their payment
	// (created.go).
	created *ttlcache.Cache[string, createdOrder]
}

// Deps are what the service needs.
type Deps struct {
	Store   *model.Store
	Redis   redis.UniversalClient
	Clock   clock.Clock
	Log     *zap.Logger
	Metrics *metrics.Metrics
	Pay     *pay.Registry // the enabled providers: checkout, and the query before a close
}

// New returns the order service.
func New(d Deps, s Settings) *Service {
	svc := &Service{
		store: d.Store, rdb: d.Redis, stock: stock.NewCounter(d.Redis),
		clock: d.Clock, log: d.Log, metrics: d.Metrics, set: s,
		products: newProductCache(), shortChecks: newShortChecks(), pay: d.Pay,
		counterBuilds: newCounterBuilds(),
		created:       newCreatedCache(),
	}
	if s.ActivateBatch > 1 {
		svc.batcher = newBatcher("activate", s.ActivateBatch, activateLeaders, activatePatience, svc.activateBatch)
		svc.closer = newBatcher("close", s.ActivateBatch, activateLeaders, activatePatience, svc.closeBatch)
	}
	return svc
}

// Business errors.
var (
	ErrNotFound       = apperr.New(apperr.NotFound, "order_not_found", "no such order")
	ErrProductUnknown = apperr.New(apperr.NotFound, "product_not_found", "no such product")
	ErrOutOfStock     = apperr.New(apperr.Conflict, "out_of_stock", "not enough stock for this order")
	ErrTooManyPending = apperr.New(apperr.TooMany, "too_many_pending", "too many unpaid orders; pay or cancel one first")
	ErrForbidden      = apperr.New(apperr.Forbidden, "forbidden", "this order belongs to another buyer")
	ErrNotRetryable   = apperr.New(apperr.Conflict, "invalid_status", "only a failed order can be retried")
)

// newNumber returns an unguessable, time-ordered number: the UTC date and
// the millisecond of the day (6 base-36 digits, so numbers sort by creation
// time), then 80 random bits. The time prefix keeps the unique index's
// inserts local, and it orders an order's tasks: asynq runs tasks due in the
// same second in the order of their IDs, which embed the number, so of
// 1,000 orders expiring in one second the ones that expired first close
// first.
func newNumber(prefix string, now time.Time) string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand: " + err.Error()) // the OS entropy source does not fail
	}
	u := now.UTC()
	ms := u.Sub(u.Truncate(24 * time.Hour)).Milliseconds()
	tod := strconv.FormatInt(ms, 36)
	tod = strings.Repeat("0", 6-len(tod)) + tod
	return prefix + u.Format("060102") + tod + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

func newToken() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// activateRow is the outbox row that queues an order's activation under gen.
func activateRow(orderNo string, gen int, now time.Time) *model.OutboxRow {
	return model.TaskRow(tasks.ID(tasks.TypeOrderActivate, orderNo, gen), tasks.TypeOrderActivate,
		tasks.Encode(tasks.OrderPayload{OrderNo: orderNo, Gen: gen}), now, now)
}

// notify records an admin notification; delivery is notify:deliver's job.
func (s *Service) notifyAdmin(ctx context.Context, tx *model.Store, id, kind, subject, message string) error {
	return tx.InsertNotification(ctx, &model.Notification{
		NotifyID: id, Kind: kind, Subject: subject, Recipient: "admin", Message: message, CreatedAt: s.clock.Now(),
	})
}
