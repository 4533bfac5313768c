-- +goose Up
-- As ../mysql/00007_payment_providers.sql.
ALTER TABLE payments ADD COLUMN provider VARCHAR(16) NOT NULL DEFAULT 'paysim';
DROP INDEX uk_payments_trade_no;
CREATE UNIQUE INDEX uk_payments_provider_trade ON payments (provider, trade_no);
ALTER TABLE refunds ADD COLUMN provider VARCHAR(16) NOT NULL DEFAULT 'paysim';
DROP INDEX uk_refunds_order_trade;
CREATE UNIQUE INDEX uk_refunds_order_trade ON refunds (order_id, provider, trade_no);
ALTER TABLE held_payments ADD COLUMN provider VARCHAR(16) NOT NULL DEFAULT 'paysim';
DROP INDEX uk_held_payments_trade_order;
CREATE UNIQUE INDEX uk_held_payments_trade_order ON held_payments (provider, trade_no, order_id);

CREATE TABLE payment_attempts (
  id            INTEGER       PRIMARY KEY AUTOINCREMENT,
  order_id      BIGINT        NOT NULL,
  order_no      VARCHAR(32)   NOT NULL,
  provider      VARCHAR(16)   NOT NULL,
  ref           VARCHAR(128)  NOT NULL DEFAULT '',
  pay_url       VARCHAR(4096) NOT NULL DEFAULT '',
  qr_code       VARCHAR(1024) NOT NULL DEFAULT '',
  client_secret VARCHAR(255)  NOT NULL DEFAULT '',
  expires_at    DATETIME      NOT NULL,
  created_at    DATETIME      NOT NULL
);
CREATE UNIQUE INDEX uk_payment_attempts_order_provider ON payment_attempts (order_id, provider);
CREATE INDEX idx_payment_attempts_expires ON payment_attempts (expires_at);

-- +goose Down
DROP TABLE payment_attempts;
DROP INDEX uk_held_payments_trade_order;
ALTER TABLE held_payments DROP COLUMN provider;
CREATE UNIQUE INDEX uk_held_payments_trade_order ON held_payments (trade_no, order_id);
DROP INDEX uk_refunds_order_trade;
ALTER TABLE refunds DROP COLUMN provider;
CREATE UNIQUE INDEX uk_refunds_order_trade ON refunds (order_id, trade_no);
DROP INDEX uk_payments_provider_trade;
ALTER TABLE payments DROP COLUMN provider;
CREATE UNIQUE INDEX uk_payments_trade_no ON payments (trade_no);
