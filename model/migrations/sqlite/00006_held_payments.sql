-- +goose Up
-- As ../mysql/00006_held_payments.sql.
CREATE TABLE held_payments (
  id            INTEGER     PRIMARY KEY AUTOINCREMENT,
  trade_no      VARCHAR(64) NOT NULL,
  order_id      BIGINT      NOT NULL,
  order_no      VARCHAR(32) NOT NULL,
  amount_cents  BIGINT      NOT NULL,
  paid_order_id BIGINT      NOT NULL,
  paid_order_no VARCHAR(32) NOT NULL,
  created_at    DATETIME    NOT NULL
);
CREATE UNIQUE INDEX uk_held_payments_trade_order ON held_payments (trade_no, order_id);
CREATE INDEX idx_held_payments_order ON held_payments (order_id);

-- +goose Down
DROP TABLE held_payments;
