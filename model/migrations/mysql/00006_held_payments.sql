-- +goose Up
-- A payment notified for one order with a trade number the ledger already
-- records for another order (payments.trade_no is unique). A trade names one
-- payment at the provider, so refunding it again could return the other
-- order's money: it is held here for an operator, never delivered, never
-- refunded automatically, once per (trade, order).
CREATE TABLE held_payments (
  id            BIGINT      NOT NULL AUTO_INCREMENT,
  trade_no      VARCHAR(64) NOT NULL,
  order_id      BIGINT      NOT NULL,
  order_no      VARCHAR(32) NOT NULL,
  amount_cents  BIGINT      NOT NULL,
  -- the order the trade's recorded payment belongs to
  paid_order_id BIGINT      NOT NULL,
  paid_order_no VARCHAR(32) NOT NULL,
  created_at    DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_held_payments_trade_order (trade_no, order_id),
  KEY idx_held_payments_order (order_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE held_payments;
