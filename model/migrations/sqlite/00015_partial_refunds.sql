-- +goose Up
-- As ../mysql/00015_partial_refunds.sql.
ALTER TABLE orders ADD COLUMN refunded_cents BIGINT NOT NULL DEFAULT 0;
UPDATE orders SET refunded_cents = (
  SELECT COALESCE(SUM(r.amount_cents), 0) FROM refunds r WHERE r.order_id = orders.id AND r.reason = 'operator');
ALTER TABLE refunds ADD COLUMN note VARCHAR(255) NOT NULL DEFAULT '';
ALTER TABLE refunds ADD COLUMN trade_cents BIGINT NOT NULL DEFAULT 0;
DROP INDEX uk_refunds_order_trade;
CREATE UNIQUE INDEX uk_refunds_base_no ON refunds (base_no);
CREATE INDEX idx_refunds_order ON refunds (order_id);

-- +goose Down
DROP INDEX idx_refunds_order;
DROP INDEX uk_refunds_base_no;
CREATE UNIQUE INDEX uk_refunds_order_trade ON refunds (order_id, provider, trade_no);
ALTER TABLE refunds DROP COLUMN trade_cents;
ALTER TABLE refunds DROP COLUMN note;
ALTER TABLE orders DROP COLUMN refunded_cents;
