package model_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/model"

	"gorm.io/gorm"
)

// The relay's DELETE of outbox rows can lose a deadlock to another deleter
// of the same rows (the fast path's deleter and the sweep's push of a row it
// found old each delete theirs); the DELETE is idempotent, so it runs again
// instead of failing its caller (a whole reconciliation pass, once). Here a
// heavier transaction deletes row b, the relay's DELETE takes row a and
// waits for b (seen in information_schema.innodb_trx, by the relay's
// connection id), and the heavier one then deletes a: InnoDB rolls back the
// lighter side, the relay's DELETE, which runs again once the other commits.
func TestDeleteOutboxRunsAgainAfterLosingADeadlock(t *testing.T) {
	dsn := testenv.Database(t)
	open := func(pool model.PoolConfig) *gorm.DB {
		db, err := model.Open(dsn, pool)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if sqlDB, err := db.DB(); err == nil {
				sqlDB.Close()
			}
		})
		return db
	}
	db, relayDB := open(model.PoolConfig{MaxOpen: 4}), open(model.PoolConfig{MaxOpen: 1, MaxIdle: 1})
	b := &bundle{store: model.NewStore(db), db: db, ctx: context.Background(), now: time.Now().UTC().Truncate(time.Millisecond)}
	relay := model.NewStore(relayDB)
	var relayConn int64 // the relay's one connection
	if err := relayDB.Raw(`SELECT CONNECTION_ID()`).Scan(&relayConn).Error; err != nil {
		t.Fatal(err)
	}
	var keys []model.OutboxKey
	for _, id := range []string{"deadlock:a", "deadlock:b"} {
		r := &model.OutboxRow{TaskID: id, TaskType: "t", Payload: []byte("{}"), ProcessAt: b.now, CreatedAt: b.now}
		if err := b.store.InsertOutboxLater(b.ctx, r); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, r.Key())
	}

	sqlDB, err := b.db.DB()
	if err != nil {
		t.Fatal(err)
	}
	heavy, err := sqlDB.Conn(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = heavy.Close() })
	run := func(c *sql.Conn, query string) {
		t.Helper()
		if _, err := c.ExecContext(b.ctx, query); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	run(heavy, `START TRANSACTION`)
	run(heavy, `INSERT INTO events (object_type, object_no, from_status, to_status, reason, created_at)
		SELECT 'order', CONCAT('DEADLOCK', seq), 'x', 'y', 'weight', NOW(3) FROM seq_1_to_200`)
	run(heavy, `DELETE FROM outbox WHERE task_id = 'deadlock:b'`)

	retries := model.TxRetries()
	done := make(chan error, 1)
	go func() { done <- relay.DeleteOutbox(context.Background(), keys) }()
	testenv.EventuallyEvery(t, 30*time.Second, testenv.InnoDBTrxPoll, "the relay's DELETE waiting for row b", func() (bool, error) {
		select {
		case err := <-done:
			t.Fatalf("DeleteOutbox returned (%v) without waiting for row b", err)
		default:
		}
		var n int64
		err := b.db.Raw(`SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = ? AND trx_state = 'LOCK WAIT'`, relayConn).Scan(&n).Error
		return err == nil && n == 1, err
	})
	run(heavy, `DELETE FROM outbox WHERE task_id = 'deadlock:a'`) // closes the cycle; the relay's side is rolled back
	run(heavy, `COMMIT`)

	if err := testenv.Receive(t, done, 30*time.Second, "DeleteOutbox to return"); err != nil {
		t.Fatalf("DeleteOutbox after losing a deadlock: %v, want it run again and done", err)
	}
	if model.TxRetries() == retries {
		t.Error("no statement was run again: the test made no deadlock")
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM outbox WHERE task_id LIKE 'deadlock:%'`); n != 0 {
		t.Errorf("%d rows left, want 0", n)
	}
}

// Outbox rows are written without reading their id back: a second row with
// a task ID already waiting is a no-op that does not fail its transaction,
// and a delete names a row by task ID and the millisecond it was written, so
// it never takes a later row that asks for the same task again.
func TestOutboxRowsByKey(t *testing.T) {
	b := setup(t)
	row := func(at time.Time) *model.OutboxRow {
		return &model.OutboxRow{TaskID: "tx-test:task", TaskType: "t", Payload: []byte("{}"), ProcessAt: at, CreatedAt: at}
	}
	first := row(b.now.Add(123456 * time.Nanosecond)) // finer than the column keeps
	for i := range 2 {
		err := b.store.InTx(b.ctx, func(tx *model.Store) error {
			if err := tx.InsertOutboxLater(b.ctx, first); err != nil {
				return err
			}
			return tx.InsertEventLater(b.ctx, model.Event{ObjectType: "order", ObjectNo: "TXOUTBOX", FromStatus: "x", ToStatus: "y", Reason: "after outbox", CreatedAt: b.now})
		})
		if err != nil {
			t.Fatalf("insert %d: %v", i+1, err)
		}
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM outbox WHERE task_id = 'tx-test:task'`); n != 1 {
		t.Fatalf("%d rows for one task ID, want 1", n)
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM events WHERE object_no = 'TXOUTBOX'`); n != 2 {
		t.Fatalf("%d events, want 2: a repeated outbox row must not fail its transaction", n)
	}
	// A later row for the same task, after the first is gone.
	if err := b.store.DeleteOutbox(b.ctx, []model.OutboxKey{first.Key()}); err != nil {
		t.Fatal(err)
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM outbox WHERE task_id = 'tx-test:task'`); n != 0 {
		t.Fatalf("the row is still there after its delete (key %+v)", first.Key())
	}
	second := row(b.now.Add(time.Second))
	if err := b.store.InsertOutboxLater(b.ctx, second); err != nil {
		t.Fatal(err)
	}
	if err := b.store.DeleteOutbox(b.ctx, []model.OutboxKey{first.Key()}); err != nil {
		t.Fatal(err)
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM outbox WHERE task_id = 'tx-test:task'`); n != 1 {
		t.Fatal("a late delete of the first row took the second one")
	}
}
