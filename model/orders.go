package model

import (
	"context"
	"fmt"
	"time"
)

// Order is one purchase, from pending to a terminal status.
type Order struct {
	ID          int64
	OrderNo     string
	UserID      int64
	ProductID   int64
	Kind        ProductKind
	Quantity    int
	AmountCents int64
	// RefundedCents is what the order's own payment has returned or is
	// returning (operator refunds); never more than AmountCents.
	RefundedCents int64
	Status        OrderStatus
	TradeNo       *string
	ActivateGen   int
	CloseGen      int
	Attempts      int
	ClaimToken    *string
	ClaimTaskID   *string
	// ClaimedBy is the worker process holding the claim (its lease ID).
	ClaimedBy  *string
	ClaimedAt  *time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
	ExpireAt   time.Time
	PaidAt     *time.Time
	FinishedAt *time.Time
	ClosedAt   *time.Time
	// TraceContext is the traceparent of the request that created the
	// order (nil when tracing is off): its payment continues that trace.
	TraceContext *string
}

const orderColumns = `orders (order_no, user_id, product_id, kind, quantity, amount_cents, status, created_at, updated_at, expire_at, trace_context)`

// insertArgs are o's columns, stamped with the trace of the request that
// creates it.
func (s *Store) insertArgs(ctx context.Context, o *Order) []any {
	o.TraceContext = s.stamp(ctx, o.TraceContext)
	return []any{o.OrderNo, o.UserID, o.ProductID, o.Kind, o.Quantity, o.AmountCents, o.Status, o.CreatedAt, o.UpdatedAt, o.ExpireAt, o.TraceContext}
}

// InsertOrder creates a pending order and sets its ID.
func (s *Store) InsertOrder(ctx context.Context, o *Order) error {
	id, err := s.insert(ctx, `INSERT INTO `+orderColumns+` VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, s.insertArgs(ctx, o)...)
	o.ID = id
	return err
}

// InsertOrderInSlot takes one of the buyer's pending-order slots (at most
// max) and creates the pending order, setting its ID — on MySQL in one round
// trip, the INSERT running only if the slot UPDATE changed the buyer's row.
// false, with nothing written, means the buyer already holds max.
func (s *Store) InsertOrderInSlot(ctx context.Context, o *Order, max int) (bool, error) {
	if s.d.sqlite {
		ok, err := s.TakePendingSlot(ctx, o.UserID, max)
		if !ok || err != nil {
			return false, err
		}
		return true, s.InsertOrder(ctx, o)
	}
	res, err := s.execResult(ctx, takePendingSlot+";\n"+
		`INSERT INTO `+orderColumns+` SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM DUAL WHERE ROW_COUNT() > 0`,
		append([]any{o.UserID, max}, s.insertArgs(ctx, o)...)...)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); n == 0 || err != nil {
		return false, err
	}
	o.ID, err = res.LastInsertId()
	return true, err
}

// OrderByNo loads an order by its number.
func (s *Store) OrderByNo(ctx context.Context, orderNo string) (*Order, error) {
	return rowOf[Order](ctx, s, `SELECT * FROM orders WHERE order_no = ?`, orderNo)
}

// OrderByID loads an order by its primary key.
func (s *Store) OrderByID(ctx context.Context, id int64) (*Order, error) {
	return rowOf[Order](ctx, s, `SELECT * FROM orders WHERE id = ?`, id)
}

// ListOrders pages through orders, newest first, optionally of one status.
func (s *Store) ListOrders(ctx context.Context, status *OrderStatus, beforeID int64, limit int) ([]Order, error) {
	q := `SELECT * FROM orders WHERE id < ?`
	args := []any{beforeID}
	if status != nil {
		q += ` AND status = ?`
		args = append(args, *status)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit)
	return rowsOf[Order](ctx, s, q, args...)
}

// CountOrdersByStatus returns the number of orders per status.
func (s *Store) CountOrdersByStatus(ctx context.Context) (map[OrderStatus]int64, error) {
	return countsBy[OrderStatus](ctx, s, `SELECT status AS counted, COUNT(*) AS n FROM orders GROUP BY status`)
}

// OrderMove is one conditional status change of an order.
type OrderMove struct {
	From, To OrderStatus
	Reason   string
	At       time.Time
	// Set holds extra columns to write with the move (column → value).
	Set map[string]any
	// Token, when set, also requires claim_token = Token: only the claim's
	// holder may finalize or release it.
	Token string
	// NextGen, when set, re-enters the order into the queue under a new
	// generation: it writes activate_gen = NextGen and requires
	// activate_gen = NextGen-1, so two sweepers cannot both re-queue it.
	NextGen int
	// CountAttempt adds one to the order's activation attempts.
	CountAttempt bool
}

// MoveOrder applies m to order id with one UPDATE naming the status it leaves,
// by primary key, and records the event in the same statement's transaction
// (callers run it inside InTx). It reports false when 0 rows moved: someone
// else moved the order first.
func (s *Store) MoveOrder(ctx context.Context, id int64, orderNo string, m OrderMove) (bool, error) {
	q, args, ev, err := orderMove(id, orderNo, m)
	if err != nil {
		return false, err
	}
	var n int64
	if !s.d.sqlite {
		// The move and its event in one round trip.
		n, err = s.exec(ctx, q+";\n"+insertEventIfMoved, append(args, ev.args()...)...)
	} else if n, err = s.exec(ctx, q, args...); err == nil && n == 1 {
		err = s.InsertEventLater(ctx, ev)
	}
	if err != nil || n != 1 {
		return false, err
	}
	return true, s.orderMovedLater(ctx, id, orderNo, m)
}

// MoveOrderOrAbortLater is MoveOrder for a transaction that must not commit
// without the move: if someone else moved the order first, the transaction
// fails with ErrUnmet naming the move. On MariaDB the move, its event and
// the check wait for the transaction's next round trip (often its COMMIT),
// so a one-move transaction costs one round trip.
func (s *Store) MoveOrderOrAbortLater(ctx context.Context, id int64, orderNo string, m OrderMove) error {
	q, args, ev, err := orderMove(id, orderNo, m)
	if err != nil {
		return err
	}
	check := m.check(orderNo)
	if !s.d.sqlite {
		err = s.laterExpect(ctx, check, 1, q+";\n"+insertEventIfMoved, append(args, ev.args()...)...)
	} else if err = s.laterExpect(ctx, check, 1, q, args...); err == nil {
		err = s.InsertEventLater(ctx, ev)
	}
	if err == nil {
		// After the check: on MariaDB a failed check stops the batch
		// before the event's INSERT, and the transaction rolls back.
		err = s.orderMovedLater(ctx, id, orderNo, m)
	}
	return err
}

// orderMovedLater is what every move of an order owes once it is made,
// alone or in a batch: the order's cached view dropped after the commit,
// and the shop event the move causes, if any, written in the transaction.
func (s *Store) orderMovedLater(ctx context.Context, id int64, orderNo string, m OrderMove) error {
	s.staleAfterCommit(ctx, id, orderNo)
	return s.webhookForMoveLater(ctx, "order", m.From.String(), m.To.String(), m.At, map[string]any{"order_no": orderNo})
}

// check names m as an unmet check does: the order, the move and the
// conditions it carries besides the status.
func (m OrderMove) check(orderNo string) string {
	c := "order " + orderNo + " " + m.From.String() + "→" + m.To.String()
	if m.Token != "" {
		c += " (claim token)"
	}
	if m.NextGen > 0 {
		c += fmt.Sprintf(" (activate gen %d)", m.NextGen-1)
	}
	return c
}

// orderMove builds m's UPDATE and its event.
func orderMove(id int64, orderNo string, m OrderMove) (string, []any, Event, error) {
	if err := OrderMachine.Check(orderNo, m.From, m.To); err != nil {
		return "", nil, Event{}, err
	}
	u := newStatusUpdate("orders", m.To, m.At, m.Set)
	u.from(id, "status = ?", m.From)
	if m.NextGen > 0 {
		u.assign("activate_gen = ?", m.NextGen)
		u.and("activate_gen = ?", m.NextGen-1)
	}
	if m.CountAttempt {
		u.assign("attempts = attempts + 1")
	}
	if m.Token != "" {
		u.and("claim_token = ?", m.Token)
	}
	q, args := u.sql()
	ev := Event{
		ObjectType: "order", ObjectNo: orderNo,
		FromStatus: m.From.String(), ToStatus: m.To.String(),
		Reason: m.Reason, CreatedAt: m.At,
	}
	return q, args, ev, nil
}

// TakeOverClaim lets a task redelivered after its lease expired take over the
// claim it made itself (same task ID) under a new token, held now by worker.
// Not a status move: the order stays claimed.
func (s *Store) TakeOverClaim(ctx context.Context, id int64, taskID, oldToken, newToken, worker string, at time.Time) (bool, error) {
	n, err := s.exec(ctx,
		`UPDATE orders SET claim_token = ?, claimed_by = ?, claimed_at = ?, updated_at = ?, attempts = attempts + 1
		 WHERE id = ? AND status = ? AND claim_task_id = ? AND claim_token = ?`,
		newToken, worker, at, at, id, OrderClaimed, taskID, oldToken)
	return n == 1, err
}

// RequeueOrder gives a paid order whose task was lost a new generation
// (paid stays paid, so it is not a status move).
func (s *Store) RequeueOrder(ctx context.Context, id int64, nextGen int, at time.Time) (bool, error) {
	n, err := s.exec(ctx,
		`UPDATE orders SET activate_gen = ?, updated_at = ? WHERE id = ? AND status = ? AND activate_gen = ?`,
		nextGen, at, id, OrderPaid, nextGen-1)
	return n == 1, err
}

// BumpCloseGen gives a pending order's close task a new generation.
func (s *Store) BumpCloseGen(ctx context.Context, id int64, nextGen int) (bool, error) {
	n, err := s.exec(ctx, `UPDATE orders SET close_gen = ? WHERE id = ? AND status = ? AND close_gen = ?`, nextGen, id, OrderPending, nextGen-1)
	return n == 1, err
}

// LockOrder takes the order row's write lock for the rest of the
// transaction, serializing everyone who finishes the order's refunds. It
// bumps lock_seq rather than rewriting a column with its own value: an
// UPDATE that changes nothing writes no row, and on Galera a row not
// written is not in the write set, so two transactions locking the order
// on two nodes would both commit. A real change makes the later one fail
// certification (1213), and InTx re-runs it after the winner.
func (s *Store) LockOrder(ctx context.Context, id int64) error {
	_, err := s.exec(ctx, `UPDATE orders SET lock_seq = lock_seq + 1 WHERE id = ?`, id)
	return err
}
