package outbox

import (
	"context"
	"sync"
	"time"

	"orderflow/model"

	"go.uber.org/zap"
)

// deleteBatch bounds one DELETE's list of rows.
const deleteBatch = 500

// deleteLinger is how long a delete loop waits for more rows before it
// sends a statement that is not full: at a few hundred rows a second, ten
// milliseconds gathers several rows per DELETE for no one's latency (the
// rows are already in asynq).
const deleteLinger = 10 * time.Millisecond

// deleter removes the rows the fast path has handed to asynq, off the
// request path and many rows per statement: rows handed over while one
// DELETE runs share the next one, so under load a row costs a fraction of a
// round trip. A row whose delete is lost (crash, database error) stays for
// the poller, which re-enqueues it: asynq refuses the duplicate task ID while
// the task exists, and a task that already finished runs once more against
// a ledger that makes it a no-op — the same as a crash between enqueue and
// delete always was.
type deleter struct {
	store *model.Store
	log   *zap.Logger

	mu      sync.Mutex
	ids     []model.OutboxKey
	running bool
}

// add queues ids for deletion and starts a delete loop unless one runs.
func (d *deleter) add(ids []model.OutboxKey) {
	if len(ids) == 0 {
		return
	}
	d.mu.Lock()
	d.ids = append(d.ids, ids...)
	start := !d.running
	d.running = true
	d.mu.Unlock()
	if start {
		go d.run()
	}
}

// run deletes what is queued, batch after batch, and ends when nothing is.
func (d *deleter) run() {
	for {
		d.mu.Lock()
		full := len(d.ids) >= deleteBatch
		d.mu.Unlock()
		if !full {
			time.Sleep(deleteLinger)
		}
		d.mu.Lock()
		n := min(len(d.ids), deleteBatch)
		if n == 0 {
			d.running = false
			d.mu.Unlock()
			return
		}
		batch := append([]model.OutboxKey(nil), d.ids[:n]...)
		d.ids = d.ids[n:]
		d.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := d.store.DeleteOutbox(ctx, batch); err != nil {
			d.log.Warn("outbox rows not deleted; the poller will drop them", zap.Int("rows", len(batch)), zap.Error(err))
		}
		cancel()
	}
}

// flush waits until every queued id was deleted (or given up on) or ctx ends.
func (d *deleter) flush(ctx context.Context) error {
	for {
		d.mu.Lock()
		busy := d.running || len(d.ids) > 0
		d.mu.Unlock()
		if !busy {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}
