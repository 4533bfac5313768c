package fleet

import (
	"context"
	"time"

	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/idlepoll"
	"orderflow/internal/infra/metrics"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// Claims is the order side of a takeover (order.Service).
type Claims interface {
	// ReleaseClaimsOf moves every order worker holds claimed back to paid
	// and re-queues it; it returns how many it moved.
	ReleaseClaimsOf(ctx context.Context, worker string) (int, error)
	// ClaimHolders lists the workers that hold claims now.
	ClaimHolders(ctx context.Context) ([]string, error)
}

// Config builds a Watcher.
type Config struct {
	Self   string        // this worker's ID (NewWorkerID)
	Lease  time.Duration // ORDERFLOW_WORKER_LEASE
	Queues []string      // every asynq queue the fleet serves
	Redis  redis.UniversalClient
	Claims Claims
	Clock  clock.Clock
	Log    *zap.Logger
	// Metrics counts takeovers (nil: not counted).
	Metrics *metrics.Metrics
}

// Watcher is one worker's share of the fleet's leases: it beats its own and
// takes over the workers whose lease lapsed.
type Watcher struct {
	c   Config
	reg registry
	// tick is how often it beats and looks: a tenth of the lease, at most a
	// second, so a lapse is seen within a second of the lease.
	tick time.Duration
	// missing holds, per claim holder the registry did not list, when this
	// process first saw it missing (after a Redis loss every live worker
	// beats again within a tick; a dead one never does).
	missing map[string]time.Time
	// lastHolders and lastOrphans are when the ledger's claim holders and the
	// queues' orphaned tasks were last looked at; lostUntil keeps the
	// orphan look every tick for a while after a takeover.
	lastHolders, lastOrphans, lostUntil time.Time
	// beatFailing is set while beats fail, so an outage is logged once.
	beatFailing bool
}

// New builds a Watcher.
func New(c Config) *Watcher {
	return &Watcher{c: c, reg: registry{c.Redis}, tick: min(time.Second, c.Lease/10), missing: map[string]time.Time{}}
}

// Run beats and watches until ctx ends, then leaves the registry.
func (w *Watcher) Run(ctx context.Context) {
	w.Step(ctx)
	t := time.NewTicker(w.tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			if err := w.reg.leave(lctx, w.c.Self); err != nil {
				w.c.Log.Warn("fleet: leaving the registry failed; the others take this worker over after its lease", zap.Error(err))
			}
			cancel()
			return
		case <-t.C:
			w.Step(ctx)
		}
	}
}

// Step is one tick: beat, take over whoever lapsed, and now and then look
// for claim holders the registry lost and for orphaned tasks.
func (w *Watcher) Step(ctx context.Context) {
	now := w.c.Clock.Now()
	lapsed, err := w.reg.beat(ctx, w.c.Self, now, w.c.Lease)
	if err != nil {
		if !w.beatFailing && ctx.Err() == nil {
			w.c.Log.Warn("fleet: beat failed; trying every tick, quietly until it works", zap.Error(err))
		}
		w.beatFailing = true
		return
	}
	if w.beatFailing {
		w.beatFailing = false
		w.c.Log.Info("fleet: beating again")
	}
	for _, id := range lapsed {
		if id != w.c.Self {
			w.takeOver(ctx, id, now, "lease lapsed")
		}
	}
	if now.Sub(w.lastHolders) >= w.c.Lease {
		w.lastHolders = now
		w.unlisted(ctx, now)
	}
	if now.Before(w.lostUntil) || now.Sub(w.lastOrphans) >= orphanedAfter(w.c.Lease)/3 {
		w.lastOrphans = now
		w.orphans(ctx, now)
	}
}

// unlisted takes over the claim holders the registry has not listed for a
// whole lease (Redis lost it, and they have not beaten since).
func (w *Watcher) unlisted(ctx context.Context, now time.Time) {
	holders, err := w.c.Claims.ClaimHolders(ctx)
	if err != nil {
		w.c.Log.Warn("fleet: reading claim holders failed", zap.Error(err))
		return
	}
	listed, err := w.reg.members(ctx)
	if err != nil {
		w.c.Log.Warn("fleet: reading the registry failed", zap.Error(err))
		return
	}
	seen := make(map[string]bool, len(holders))
	for _, h := range holders {
		seen[h] = true
		if listed[h] {
			delete(w.missing, h)
			continue
		}
		since, ok := w.missing[h]
		if !ok {
			w.missing[h] = now
			continue
		}
		if now.Sub(since) >= w.c.Lease {
			delete(w.missing, h)
			w.takeOver(ctx, h, now, "not in the registry for a lease")
		}
	}
	for h := range w.missing {
		if !seen[h] {
			delete(w.missing, h)
		}
	}
}

// takeOver releases a lost worker's claims and puts back the tasks it held.
func (w *Watcher) takeOver(ctx context.Context, worker string, now time.Time, why string) {
	log := w.c.Log.With(zap.String("worker", worker), zap.String("why", why))
	ok, err := w.reg.claim(ctx, worker, w.c.Self, w.c.Lease)
	if err != nil || !ok {
		if err != nil {
			log.Warn("fleet: takeover not claimed", zap.Error(err))
		}
		return
	}
	w.lostUntil = now.Add(orphanedAfter(w.c.Lease) + asynqHeartbeat + w.tick)
	released, err := w.c.Claims.ReleaseClaimsOf(ctx, worker)
	if err != nil {
		log.Error("fleet: releasing a lost worker's claims failed; tried again once the takeover key expires (a lease)", zap.Int("released", released), zap.Error(err))
		return
	}
	w.orphans(ctx, now)
	if err := w.reg.forget(ctx, worker, now.Add(-w.c.Lease)); err != nil {
		log.Warn("fleet: dropping a lost worker from the registry failed", zap.Error(err))
	}
	w.c.Metrics.WorkerTakenOver(released)
	log.Warn("fleet: worker lost; its claims released and re-queued", zap.Int("claims", released))
}

// orphans puts back the tasks whose holder stopped extending their lease.
func (w *Watcher) orphans(ctx context.Context, now time.Time) {
	moved, err := requeueOrphans(ctx, w.c.Redis, w.c.Queues, now, w.c.Lease)
	if err != nil && ctx.Err() == nil {
		w.c.Log.Warn("fleet: re-queueing orphaned tasks failed", zap.Error(err))
	}
	if len(moved) > 0 {
		// Tasks due now: idle workers wait for this word, not their next poll.
		idlepoll.Announce(ctx, w.c.Redis)
		w.c.Metrics.OrphanedTasks(len(moved))
		w.c.Log.Warn("fleet: tasks of a lost worker put back in their queues", zap.Strings("task_ids", moved))
	}
}
