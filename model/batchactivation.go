package model

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The statements of an activation: paid orders — one, or a batch — claimed
// in one statement, their card sales and their finalize in one transaction.
// Each order keeps what it would get alone — its own claim token, its own
// effect row, stock flow and events, its own cache keys and shop event —
// only the statements, round trips and commits are shared. Every
// statement names the status it leaves and is checked like a single move:
// an unmet check fails the whole transaction (ErrUnmet), and the caller
// delivers the orders of that batch again, each as a batch of one.

// OrderClaim is one order of a batch claim: the task that claims it and the
// claim token it will hold.
type OrderClaim struct {
	ID     int64
	No     string
	Token  string
	TaskID string
}

// OrdersByNo loads the orders with the given numbers (those that exist), in
// one statement.
func (s *Store) OrdersByNo(ctx context.Context, nos []string) ([]Order, error) {
	args := make([]any, len(nos))
	for i, no := range nos {
		args[i] = no
	}
	return rowsOf[Order](ctx, s, `SELECT * FROM orders WHERE order_no IN (`+placeholders(len(nos))+`)`, args...)
}

// ClaimPaidOrders moves every order of claims that is still paid to claimed
// by worker, each under its own token and task, counting an attempt, with its event —
// one UPDATE, one INSERT … SELECT — and returns the IDs it moved (the rest
// were moved by someone else first). Run it in its own transaction: the
// claim commits alone, so the attempt counts whatever happens next.
func (s *Store) ClaimPaidOrders(ctx context.Context, claims []OrderClaim, worker string, at time.Time) ([]int64, error) {
	if err := OrderMachine.Check("batch", OrderPaid, OrderClaimed); err != nil {
		return nil, err
	}
	ids, tokens := claimKeys(claims)
	var tokenCase, taskCase strings.Builder
	var tokenArgs, taskArgs []any
	for _, c := range claims {
		tokenCase.WriteString(" WHEN ? THEN ?")
		tokenArgs = append(tokenArgs, c.ID, c.Token)
		taskCase.WriteString(" WHEN ? THEN ?")
		taskArgs = append(taskArgs, c.ID, c.TaskID)
	}
	args := []any{OrderClaimed, at, at, worker}
	args = append(append(append(args, tokenArgs...), taskArgs...), ids...)
	args = append(args, OrderPaid)
	if err := s.later(ctx,
		`UPDATE orders FORCE INDEX (PRIMARY) SET status = ?, updated_at = ?, claimed_at = ?, claimed_by = ?, attempts = attempts + 1,
		 claim_token = CASE id`+tokenCase.String()+` END, claim_task_id = CASE id`+taskCase.String()+` END
		 WHERE id IN (`+placeholders(len(ids))+`) AND status = ?`, args...); err != nil {
		return nil, err
	}
	if err := s.insertBatchEvents(ctx, ids, tokens, OrderPaid, OrderClaimed, "claim", at); err != nil {
		return nil, err
	}
	var moved []int64
	if err := s.all(ctx, &moved, `SELECT id FROM orders WHERE id IN (`+placeholders(len(ids))+`) AND claim_token IN (`+placeholders(len(tokens))+`)`,
		append(append([]any{}, ids...), tokens...)...); err != nil {
		return nil, err
	}
	byID := make(map[int64]OrderClaim, len(claims))
	for _, c := range claims {
		byID[c.ID] = c
	}
	for _, id := range moved {
		c := byID[id]
		if err := s.orderMovedLater(ctx, c.ID, c.No, OrderMove{From: OrderPaid, To: OrderClaimed, At: at}); err != nil {
			return nil, err
		}
	}
	return moved, nil
}

// CardSale is one card order of a batch delivery.
type CardSale struct {
	OrderID, ProductID int64
	Quantity           int
}

// SellCardOrdersLater records the card effect of every sale (a duplicate
// effect fails the transaction), moves the orders' LOCKED keys to SOLD —
// each order exactly as many as it paid for, or the transaction fails with
// ErrUnmet: never fewer keys than paid for — and records each sale's stock
// flow. On MariaDB all three wait for the transaction's next round trip.
func (s *Store) SellCardOrdersLater(ctx context.Context, sales []CardSale, at time.Time) error {
	var effects, flows, paid strings.Builder
	var effectArgs, flowArgs, orderIDs, paidArgs []any
	want := 0
	for i, c := range sales {
		if i > 0 {
			effects.WriteString(", ")
			flows.WriteString(", ")
		}
		effects.WriteString("(?, ?, ?, ?)")
		effectArgs = append(effectArgs, c.OrderID, string(KindCard), "", at)
		flows.WriteString("(?, ?, ?, ?, ?)")
		flowArgs = append(flowArgs, c.ProductID, c.OrderID, FlowSell, c.Quantity, at)
		paid.WriteString(" WHEN ? THEN ?")
		paidArgs = append(paidArgs, c.OrderID, c.Quantity)
		orderIDs = append(orderIDs, c.OrderID)
		want += c.Quantity
	}
	if err := s.later(ctx, `INSERT INTO order_effects (order_id, effect, detail, created_at) VALUES `+effects.String(), effectArgs...); err != nil {
		return err
	}
	// An order whose locked keys are not the number it paid for sells none,
	// so the batch's total falls short of want and the check fails: one
	// order's extra key cannot make up for another's missing one.
	in := placeholders(len(orderIDs))
	args := append(append(append([]any{at}, orderIDs...), orderIDs...), paidArgs...)
	if err := s.laterExpectExactly(ctx, fmt.Sprintf("%d card keys sold to a batch of %d orders", want, len(sales)), int64(want),
		`UPDATE card_keys SET status = 'SOLD', updated_at = ? WHERE order_id IN (`+in+`) AND status = 'LOCKED'
		 AND order_id NOT IN (SELECT order_id FROM (SELECT order_id FROM card_keys WHERE order_id IN (`+in+`) AND status = 'LOCKED'
		 GROUP BY order_id HAVING COUNT(*) <> CASE order_id`+paid.String()+` END) AS miscounted)`,
		args...); err != nil {
		return err
	}
	return s.later(ctx, `INSERT INTO stock_flows (product_id, order_id, flow_type, quantity, created_at) VALUES `+flows.String(), flowArgs...)
}

// FinishClaimedOrdersLater moves every order of claims claimed→finished,
// naming each one's claim token, with its event and shop event. If any
// claim was lost the transaction fails with ErrUnmet and nothing of it
// commits. On MariaDB it all waits for the next round trip (the COMMIT).
func (s *Store) FinishClaimedOrdersLater(ctx context.Context, claims []OrderClaim, at time.Time) error {
	if err := OrderMachine.Check("batch", OrderClaimed, OrderFinished); err != nil {
		return err
	}
	ids, tokens := claimKeys(claims)
	args := append(append(append([]any{OrderFinished, at, at}, ids...), OrderClaimed), tokens...)
	if err := s.laterExpectExactly(ctx, fmt.Sprintf("a batch of %d orders claimed→finished (claim tokens)", len(claims)), int64(len(claims)),
		`UPDATE orders FORCE INDEX (PRIMARY) SET status = ?, updated_at = ?, finished_at = ?
		 WHERE id IN (`+placeholders(len(ids))+`) AND status = ? AND claim_token IN (`+placeholders(len(tokens))+`)`, args...); err != nil {
		return err
	}
	if err := s.insertBatchEvents(ctx, ids, tokens, OrderClaimed, OrderFinished, "delivered", at); err != nil {
		return err
	}
	for _, c := range claims {
		if err := s.orderMovedLater(ctx, c.ID, c.No, OrderMove{From: OrderClaimed, To: OrderFinished, At: at}); err != nil {
			return err
		}
	}
	return nil
}

// insertBatchEvents records from→to for the orders among ids that hold one
// of tokens — the ones the statement before it moved — in id order.
func (s *Store) insertBatchEvents(ctx context.Context, ids, tokens []any, from, to OrderStatus, reason string, at time.Time) error {
	args := append(append([]any{"order", from.String(), to.String(), reason, at}, ids...), tokens...)
	return s.later(ctx,
		`INSERT INTO events (object_type, object_no, from_status, to_status, reason, created_at)
		 SELECT ?, order_no, ?, ?, ?, ? FROM orders WHERE id IN (`+placeholders(len(ids))+`) AND claim_token IN (`+placeholders(len(tokens))+`) ORDER BY id`,
		args...)
}

// claimKeys lists the claims' IDs and tokens as statement arguments.
func claimKeys(claims []OrderClaim) (ids, tokens []any) {
	ids, tokens = make([]any, len(claims)), make([]any, len(claims))
	for i, c := range claims {
		ids[i], tokens[i] = c.ID, c.Token
	}
	return ids, tokens
}
