-- +goose Up
-- close_gen: the generation of an order's order:close task, bumped when
-- reconciliation re-queues a close whose task Redis lost.
ALTER TABLE orders ADD COLUMN close_gen INT NOT NULL DEFAULT 1 AFTER activate_gen;
ALTER TABLE orders ADD KEY idx_orders_status_expire (status, expire_at);

-- One refund per (order, trade). refund_no is deterministic from them (plus a
-- generation an operator bumps only after the provider declared it failed),
-- and is the provider's out_request_no, so a repeat never refunds twice.
CREATE TABLE refunds (
  id            BIGINT       NOT NULL AUTO_INCREMENT,
  refund_no     VARCHAR(64)  NOT NULL,
  base_no       VARCHAR(64)  NOT NULL,
  no_gen        INT          NOT NULL DEFAULT 1,
  order_id      BIGINT       NOT NULL,
  order_no      VARCHAR(32)  NOT NULL,
  trade_no      VARCHAR(64)  NOT NULL,
  amount_cents  BIGINT       NOT NULL,
  reason        VARCHAR(16)  NOT NULL,
  status        VARCHAR(16)  NOT NULL,
  attempts      INT          NOT NULL DEFAULT 0,
  task_gen      INT          NOT NULL DEFAULT 1,
  last_error    VARCHAR(255) NOT NULL DEFAULT '',
  provider_status VARCHAR(16) NOT NULL DEFAULT '',
  created_at    DATETIME(3)  NOT NULL,
  updated_at    DATETIME(3)  NOT NULL,
  succeeded_at  DATETIME(3)  NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_refunds_refund_no (refund_no),
  UNIQUE KEY uk_refunds_order_trade (order_id, trade_no),
  KEY idx_refunds_status_updated (status, updated_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE refunds;
ALTER TABLE orders DROP KEY idx_orders_status_expire;
ALTER TABLE orders DROP COLUMN close_gen;
