package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"orderflow/model"
)

// restState is what still moves in the ledger.
type restState struct {
	busyOrders     int64 // pending, paid, claimed, refunding
	failedOrders   int64
	processing     int64 // refunds
	manual         int64 // refunds
	outbox         int64
	openGroups     int64 // OPEN or CLOSED
	undeliveredNtf int64
}

// quiet: nothing in flight, nothing waiting for the operator, every
// notification delivered (the operator acts on them).
func (s restState) quiet() bool {
	return s.busyOrders == 0 && s.failedOrders == 0 && s.processing == 0 && s.manual == 0 && s.outbox == 0 &&
		s.openGroups == 0 && s.undeliveredNtf == 0
}

func (s restState) String() string {
	return fmt.Sprintf("orders in flight %d, failed %d, refunds processing %d / manual %d, outbox %d, groups open %d, notifications pending %d",
		s.busyOrders, s.failedOrders, s.processing, s.manual, s.outbox, s.openGroups, s.undeliveredNtf)
}

func readRest(ctx context.Context, db *sql.DB) (restState, error) {
	var s restState
	err := db.QueryRowContext(ctx, "SELECT "+
		"(SELECT COUNT(*) FROM orders WHERE status IN (1, 2, 6, 7)), "+
		"(SELECT COUNT(*) FROM orders WHERE status = 4), "+
		"(SELECT COUNT(*) FROM refunds WHERE status = 'processing'), "+
		"(SELECT COUNT(*) FROM refunds WHERE status = 'manual'), "+
		"(SELECT COUNT(*) FROM outbox), "+
		"(SELECT COUNT(*) FROM `groups` WHERE status IN ('OPEN', 'CLOSED')), "+
		"(SELECT COUNT(*) FROM notifications WHERE delivered_at IS NULL)").
		Scan(&s.busyOrders, &s.failedOrders, &s.processing, &s.manual, &s.outbox, &s.openGroups, &s.undeliveredNtf)
	return s, err
}

// quiesce waits (bounded) until nothing in the ledger is in flight or needs
// a hand, running the operator's pass every couple of seconds. It returns
// how long that took and whether it got there.
func quiesce(ctx context.Context, db *sql.DB, w *workload, out *progress, within time.Duration) (time.Duration, bool, restState) {
	start := time.Now()
	deadline := start.Add(within)
	var last restState
	lastOp, lastLog := time.Time{}, time.Time{}
	for time.Now().Before(deadline) && ctx.Err() == nil {
		s, err := readRest(ctx, db)
		if err == nil {
			last = s
			if s.quiet() && len(w.c.groupRetries) == 0 {
				return time.Since(start), true, s
			}
		}
		if time.Since(lastLog) > 5*time.Second {
			out.Printf("quiescing: %s (err %v)", s, err)
			lastLog = time.Now()
		}
		if time.Since(lastOp) > 2*time.Second && (s.failedOrders > 0 || s.manual > 0 || len(w.c.groupRetries) > 0) {
			w.operate(ctx)
			lastOp = time.Now()
		}
		sleep(ctx, 250*time.Millisecond)
	}
	return time.Since(start), false, last
}

// lostWrites lists acknowledged writes the ledger does not have: a created
// order, a payment, a cancel, a group or a join the client was told about.
func lostWrites(ctx context.Context, db *sql.DB, h *history) ([]string, error) {
	// order_no → closed at some point
	orders, err := keyed[bool](ctx, db, `SELECT order_no, closed_at IS NOT NULL FROM orders`)
	if err != nil {
		return nil, err
	}
	// trade_no → order_no
	trades, err := keyed[string](ctx, db, `SELECT p.trade_no, o.order_no FROM payments p JOIN orders o ON o.id = p.order_id`)
	if err != nil {
		return nil, err
	}
	members := map[string]map[int64]bool{}
	err = query(ctx, db, func(rows *sql.Rows) error {
		var no string
		var uid sql.NullInt64
		if err := rows.Scan(&no, &uid); err != nil {
			return err
		}
		if members[no] == nil {
			members[no] = map[int64]bool{}
		}
		if uid.Valid {
			members[no][uid.Int64] = true
		}
		return nil
	}, "SELECT g.group_no, p.user_id FROM `groups` g LEFT JOIN group_participants p ON p.group_id = g.id")
	if err != nil {
		return nil, err
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	var lost []string
	for no, sc := range h.orders {
		if _, ok := orders[no]; !ok {
			lost = append(lost, fmt.Sprintf("order %s (%s) was created (201) but is not in the ledger", no, sc))
		}
	}
	for t, no := range h.payments {
		if got, ok := trades[t]; !ok || got != no {
			lost = append(lost, fmt.Sprintf("payment %s of order %s was acknowledged but is not in the ledger", t, no))
		}
	}
	for no := range h.cancels {
		if !orders[no] {
			lost = append(lost, fmt.Sprintf("cancel of order %s was acknowledged but the order never closed", no))
		}
	}
	for no := range h.groups {
		if members[no] == nil {
			lost = append(lost, fmt.Sprintf("group %s was created (201) but is not in the ledger", no))
		}
	}
	for no, ids := range h.joins {
		for _, id := range ids {
			if !members[no][id] {
				lost = append(lost, fmt.Sprintf("user %d joined group %s (200) but is not a participant", id, no))
			}
		}
	}
	return lost, nil
}

// OutcomeRow is the number of orders of one kind that ended in one status.
type OutcomeRow struct {
	Kind, Status string
	N            int64
}

// query runs a query and scans each row: the package's one loop over rows
// (a read of one row is QueryRowContext).
func query(ctx context.Context, db *sql.DB, scan func(*sql.Rows) error, q string, args ...any) error {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// keyed reads a two-column query into a map from the first column to the
// second: a count by status, an order's number to whether it closed.
func keyed[V any](ctx context.Context, db *sql.DB, q string) (map[string]V, error) {
	out := map[string]V{}
	err := query(ctx, db, func(rows *sql.Rows) error {
		var k string
		var v V
		if err := rows.Scan(&k, &v); err != nil {
			return err
		}
		out[k] = v
		return nil
	}, q)
	return out, err
}

// staleViews compares what each buyer is shown (GET /api/v1/orders/{no},
// served from the order cache when it holds an entry) with the ledger, once
// everything is at rest: status, refunds and delivered cards must agree.
func staleViews(ctx context.Context, db *sql.DB, w *workload) ([]string, error) {
	type truth struct {
		status  string
		refunds map[string]string
		cards   int
	}
	ledger := map[string]*truth{}
	err := query(ctx, db, func(rows *sql.Rows) error {
		var no string
		var st, cards int
		if err := rows.Scan(&no, &st, &cards); err != nil {
			return err
		}
		ledger[no] = &truth{status: model.OrderStatus(st).String(), refunds: map[string]string{}, cards: cards}
		return nil
	}, `SELECT o.order_no, o.status, (SELECT COUNT(*) FROM card_keys k WHERE k.order_id = o.id AND k.status = 'SOLD') FROM orders o`)
	if err != nil {
		return nil, err
	}
	err = query(ctx, db, func(rows *sql.Rows) error {
		var no, rno, st string
		if err := rows.Scan(&no, &rno, &st); err != nil {
			return err
		}
		if t := ledger[no]; t != nil {
			t.refunds[rno] = st
		}
		return nil
	}, `SELECT order_no, refund_no, status FROM refunds`)
	if err != nil {
		return nil, err
	}

	w.hist.mu.Lock()
	owners := make(map[string]buyer, len(w.hist.owners))
	for k, v := range w.hist.owners {
		owners[k] = v
	}
	w.hist.mu.Unlock()
	var stale []string
	for _, no := range sortedStrings(owners) {
		t := ledger[no]
		if t == nil {
			continue // reported as a lost write
		}
		var v struct {
			Status  string   `json:"status"`
			Cards   []string `json:"cards"`
			Refunds []struct {
				RefundNo string `json:"refund_no"`
				Status   string `json:"status"`
			} `json:"refunds"`
		}
		a, err := w.http.do(ctx, "GET", w.c.apiURLs[0]+"/api/v1/orders/"+no, owners[no].token, nil)
		if err != nil || a.status != 200 {
			return nil, fmt.Errorf("get order %s: %d %v", no, a.status, err)
		}
		if err := decodeInto(a, &v); err != nil {
			return nil, err
		}
		var diffs []string
		if v.Status != t.status {
			diffs = append(diffs, fmt.Sprintf("status %s, ledger %s", v.Status, t.status))
		}
		if len(v.Cards) != t.cards {
			diffs = append(diffs, fmt.Sprintf("%d cards, ledger %d sold", len(v.Cards), t.cards))
		}
		shown := map[string]string{}
		for _, r := range v.Refunds {
			shown[r.RefundNo] = r.Status
		}
		for rno, st := range t.refunds {
			if shown[rno] != st {
				diffs = append(diffs, fmt.Sprintf("refund %s %q, ledger %s", rno, shown[rno], st))
			}
		}
		if len(diffs) > 0 {
			stale = append(stale, fmt.Sprintf("order %s shows %s", no, strings.Join(diffs, "; ")))
		}
	}
	return stale, nil
}
