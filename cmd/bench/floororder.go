package main

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"time"
)

// floorOrder is one order's ledger work in four transactions, the same rows
// the product writes for it:
//  1. create the order row + lock one card key UNSOLD→LOCKED + stock flow (lock);
//  2. pending→paid + the activation's outbox row;
//  3. paid→claimed (claim token);
//  4. the key LOCKED→SOLD + claimed→finished naming the token.
func floorOrder(ctx context.Context, db *sql.DB, productID, userID int64, retries *atomic.Int64) error {
	orderNo, trade, token := "F"+randHex(12), "T"+randHex(12), randHex(16)
	var orderID int64
	steps := []func(tx *sql.Tx, now time.Time) error{
		func(tx *sql.Tx, now time.Time) error {
			res, err := tx.ExecContext(ctx,
				`INSERT INTO orders (order_no, user_id, product_id, kind, quantity, amount_cents, status, created_at, updated_at, expire_at)
				 VALUES (?, ?, ?, 'card', 1, 990, 1, ?, ?, ?)`, orderNo, userID, productID, now, now, now.Add(15*time.Minute))
			if err != nil {
				return err
			}
			if orderID, err = res.LastInsertId(); err != nil {
				return err
			}
			if err := execOne(ctx, tx, `UPDATE card_keys SET status = 'LOCKED', order_id = ?, updated_at = ?
				WHERE product_id = ? AND status IN ('UNSOLD', 'RECYCLED') LIMIT 1`, orderID, now, productID); err != nil {
				return fmt.Errorf("lock key: %w", err)
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO stock_flows (product_id, order_id, flow_type, quantity, created_at) VALUES (?, ?, 1, 1, ?)`, productID, orderID, now)
			return err
		},
		func(tx *sql.Tx, now time.Time) error {
			if err := execOne(ctx, tx, `UPDATE orders SET status = 2, trade_no = ?, paid_at = ?, updated_at = ?, activate_gen = 1
				WHERE id = ? AND status = 1`, trade, now, now, orderID); err != nil {
				return fmt.Errorf("pay: %w", err)
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO outbox (task_id, task_type, payload, process_at, created_at) VALUES (?, 'order:activate', ?, ?, ?)`,
				"order:activate:"+orderNo+":1", `{"order_no":"`+orderNo+`","gen":1}`, now, now)
			return err
		},
		func(tx *sql.Tx, now time.Time) error {
			return execOne(ctx, tx, `UPDATE orders SET status = 6, claim_token = ?, claim_task_id = ?, claimed_at = ?, updated_at = ?, attempts = attempts + 1
				WHERE id = ? AND status = 2`, token, "order:activate:"+orderNo+":1", now, now, orderID)
		},
		func(tx *sql.Tx, now time.Time) error {
			if err := execOne(ctx, tx, `UPDATE card_keys SET status = 'SOLD', updated_at = ? WHERE order_id = ? AND status = 'LOCKED'`, now, orderID); err != nil {
				return fmt.Errorf("sell key: %w", err)
			}
			return execOne(ctx, tx, `UPDATE orders SET status = 5, finished_at = ?, updated_at = ? WHERE id = ? AND status = 6 AND claim_token = ?`, now, now, orderID, token)
		},
	}
	for _, step := range steps {
		if err := inTx(ctx, db, step, retries); err != nil {
			return err
		}
	}
	return nil
}

// inTx runs fn in a READ COMMITTED transaction, re-running it after a
// deadlock or lock wait timeout.
func inTx(ctx context.Context, db *sql.DB, fn func(tx *sql.Tx, now time.Time) error, retries *atomic.Int64) error {
	for attempt := 1; ; attempt++ {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		err = fn(tx, ms(time.Now()))
		if err == nil {
			err = tx.Commit()
		} else {
			_ = tx.Rollback()
		}
		if err == nil || !isRetryable(err) || attempt == 5 {
			return err
		}
		retries.Add(1)
	}
}

// execOne runs a conditional UPDATE that must move exactly one row.
func execOne(ctx context.Context, tx *sql.Tx, q string, args ...any) error {
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%d rows moved, want 1", n)
	}
	return nil
}
