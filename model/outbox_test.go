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

	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("DeleteOutbox after losing a deadlock: %v, want it run again and done", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("DeleteOutbox did not return")
	}
	if model.TxRetries() == retries {
		t.Error("no statement was run again: the test made no deadlock")
	}
	if n := b.count(t, `SELECT COUNT(*) FROM outbox WHERE task_id LIKE 'deadlock:%'`); n != 0 {
		t.Errorf("%d rows left, want 0", n)
	}
}
