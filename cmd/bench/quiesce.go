package main

import (
	"context"
	"database/sql"
	"time"
)

// innodbState is what a measured window inherits from the one before it:
// MariaDB does not flush dirty pages while idle (innodb_max_dirty_pages_pct_lwm
// = 0), so the redo a phase wrote stays un-checkpointed, and the next phase
// pays for the flush storm when the checkpoint age nears its ceiling.
type innodbState struct{ dirty, checkpointAge int64 }

func readInnodbState(ctx context.Context, db *sql.DB) (innodbState, error) {
	v, err := globalStatus(ctx, db, "Innodb_buffer_pool_pages_dirty", "Innodb_checkpoint_age")
	return innodbState{dirty: v["Innodb_buffer_pool_pages_dirty"], checkpointAge: v["Innodb_checkpoint_age"]}, err
}

// quiesce starts a measured window from a checkpointed server, so each
// phase pays for flushing the redo it writes itself and not the previous
// phase's: it sets innodb_max_dirty_pages_pct to 0 (MariaDB's documented way
// to flush every dirty page), waits until the dirty pages are gone and the
// purge has caught up (at most 60 s), and puts the settings back. On a
// server where the bench may not SET GLOBAL it logs that and measures anyway.
func quiesce(ctx context.Context, db *sql.DB, what string) {
	start := time.Now()
	before, err := readInnodbState(ctx, db)
	if err != nil {
		logf("quiesce before %s: %v (measuring anyway)", what, err)
		return
	}
	// Flush as fast as the server allows while nothing else runs: the
	// I/O capacity up to its maximum, every dirty page over the limit.
	restore, err := setGlobals(ctx, db, [][2]string{
		{"innodb_io_capacity", "@@GLOBAL.innodb_io_capacity_max"},
		{"innodb_max_dirty_pages_pct", "0"},
	})
	defer restore()
	if err != nil {
		logf("quiesce before %s: %v (measuring anyway)", what, err)
		return
	}
	deadline := start.Add(60 * time.Second)
	s := before
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if s, err = readInnodbState(ctx, db); err != nil {
			break
		}
		history, _ := queryInt(ctx, db, `SELECT COUNT FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len'`)
		if s.dirty <= 16 && history < 1000 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	logf("quiesce before %s: %d dirty pages, checkpoint age %.1f MiB → %d, %.1f MiB in %.1f s", what,
		before.dirty, float64(before.checkpointAge)/(1<<20), s.dirty, float64(s.checkpointAge)/(1<<20), time.Since(start).Seconds())
}

// setGlobals sets each global variable to an expression in turn and returns
// the function that puts back the values they had, in reverse order.
func setGlobals(ctx context.Context, db *sql.DB, sets [][2]string) (restore func(), err error) {
	var undo []string
	restore = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			if _, err := db.ExecContext(context.WithoutCancel(ctx), undo[i]); err != nil {
				logf("%s: %v", undo[i], err)
			}
		}
	}
	for _, kv := range sets {
		var was string
		if err := db.QueryRowContext(ctx, "SELECT @@GLOBAL."+kv[0]).Scan(&was); err != nil {
			return restore, err
		}
		if _, err := db.ExecContext(ctx, "SET GLOBAL "+kv[0]+" = "+kv[1]); err != nil {
			return restore, err
		}
		undo = append(undo, "SET GLOBAL "+kv[0]+" = "+was)
	}
	return restore, nil
}
