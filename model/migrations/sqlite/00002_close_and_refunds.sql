-- +goose Up
-- As ../mysql/00002_close_and_refunds.sql.
ALTER TABLE orders ADD COLUMN close_gen INT NOT NULL DEFAULT 1;
CREATE INDEX idx_orders_status_expire ON orders (status, expire_at);

CREATE TABLE refunds (
  id              INTEGER      PRIMARY KEY AUTOINCREMENT,
  refund_no       VARCHAR(64)  NOT NULL,
  base_no         VARCHAR(64)  NOT NULL,
  no_gen          INT          NOT NULL DEFAULT 1,
  order_id        BIGINT       NOT NULL,
  order_no        VARCHAR(32)  NOT NULL,
  trade_no        VARCHAR(64)  NOT NULL,
  amount_cents    BIGINT       NOT NULL,
  reason          VARCHAR(16)  NOT NULL,
  status          VARCHAR(16)  NOT NULL,
  attempts        INT          NOT NULL DEFAULT 0,
  task_gen        INT          NOT NULL DEFAULT 1,
  last_error      VARCHAR(255) NOT NULL DEFAULT '',
  provider_status VARCHAR(16)  NOT NULL DEFAULT '',
  created_at      DATETIME     NOT NULL,
  updated_at      DATETIME     NOT NULL,
  succeeded_at    DATETIME     NULL
);
CREATE UNIQUE INDEX uk_refunds_refund_no ON refunds (refund_no);
CREATE UNIQUE INDEX uk_refunds_order_trade ON refunds (order_id, trade_no);
CREATE INDEX idx_refunds_status_updated ON refunds (status, updated_at);

-- +goose Down
DROP TABLE refunds;
DROP INDEX idx_orders_status_expire;
ALTER TABLE orders DROP COLUMN close_gen;
