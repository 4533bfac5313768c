-- +goose Up
-- Operator refunds of any amount: an order's payment can be returned in
-- parts, so a trade may have several refunds. Each refund keeps its own
-- deterministic number (base_no, unique: a repeat of the same refund, even
-- after an operator's retry gave it a new refund_no, finds its row);
-- (order, trade) is no longer unique.
--
-- orders.refunded_cents is what the order's own payment has returned (or is
-- returning): every refund of reason 'operator'. The refund's transaction
-- raises it with a conditional UPDATE that never passes amount_cents, so
-- the database, not a read before the write, holds the sum. Late, duplicate
-- and mismatched trades are other money and are not counted.
ALTER TABLE orders ADD COLUMN refunded_cents BIGINT NOT NULL DEFAULT 0 AFTER amount_cents;
UPDATE orders SET refunded_cents = (
  SELECT COALESCE(SUM(r.amount_cents), 0) FROM refunds r WHERE r.order_id = orders.id AND r.reason = 'operator');

-- note: the operator's reason for the refund; trade_cents: the whole
-- payment the refund is part of (WeChat Pay asks for both), 0 = amount_cents.
ALTER TABLE refunds
  ADD COLUMN note VARCHAR(255) NOT NULL DEFAULT '' AFTER reason,
  ADD COLUMN trade_cents BIGINT NOT NULL DEFAULT 0 AFTER amount_cents,
  DROP INDEX uk_refunds_order_trade,
  ADD UNIQUE KEY uk_refunds_base_no (base_no),
  ADD KEY idx_refunds_order (order_id);

-- +goose Down
ALTER TABLE refunds
  DROP INDEX idx_refunds_order,
  DROP INDEX uk_refunds_base_no,
  ADD UNIQUE KEY uk_refunds_order_trade (order_id, provider, trade_no),
  DROP COLUMN trade_cents,
  DROP COLUMN note;
ALTER TABLE orders DROP COLUMN refunded_cents;
