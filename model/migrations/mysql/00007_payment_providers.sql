-- +goose Up
-- More than one payment provider (ORDERFLOW_PAY_PROVIDERS). A trade number
-- is unique per provider only: each provider numbers its own trades. A refund
-- goes through the provider that took the money, so it records which.
ALTER TABLE payments
  ADD COLUMN provider VARCHAR(16) NOT NULL DEFAULT 'paysim' AFTER id,
  DROP INDEX uk_payments_trade_no,
  ADD UNIQUE KEY uk_payments_provider_trade (provider, trade_no);
ALTER TABLE refunds
  ADD COLUMN provider VARCHAR(16) NOT NULL DEFAULT 'paysim' AFTER order_no,
  DROP INDEX uk_refunds_order_trade,
  ADD UNIQUE KEY uk_refunds_order_trade (order_id, provider, trade_no);
ALTER TABLE held_payments
  ADD COLUMN provider VARCHAR(16) NOT NULL DEFAULT 'paysim' AFTER id,
  DROP INDEX uk_held_payments_trade_order,
  ADD UNIQUE KEY uk_held_payments_trade_order (provider, trade_no, order_id);

-- A payment a buyer started at one provider (the checkout call), once per
-- (order, provider): a repeated checkout returns it, and an order with one
-- is asked about at that provider before it is closed and by the sweep, so a
-- lost notification never leaves a paid order undelivered.
CREATE TABLE payment_attempts (
  id            BIGINT        NOT NULL AUTO_INCREMENT,
  order_id      BIGINT        NOT NULL,
  order_no      VARCHAR(32)   NOT NULL,
  provider      VARCHAR(16)   NOT NULL,
  -- the provider's id of the payment when it gives one at creation (Stripe)
  ref           VARCHAR(128)  NOT NULL DEFAULT '',
  pay_url       VARCHAR(4096) NOT NULL DEFAULT '',
  qr_code       VARCHAR(1024) NOT NULL DEFAULT '',
  client_secret VARCHAR(255)  NOT NULL DEFAULT '',
  expires_at    DATETIME(3)   NOT NULL,
  created_at    DATETIME(3)   NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_payment_attempts_order_provider (order_id, provider),
  KEY idx_payment_attempts_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE payment_attempts;
ALTER TABLE held_payments DROP INDEX uk_held_payments_trade_order, DROP COLUMN provider,
  ADD UNIQUE KEY uk_held_payments_trade_order (trade_no, order_id);
ALTER TABLE refunds DROP INDEX uk_refunds_order_trade, DROP COLUMN provider,
  ADD UNIQUE KEY uk_refunds_order_trade (order_id, trade_no);
ALTER TABLE payments DROP INDEX uk_payments_provider_trade, DROP COLUMN provider,
  ADD UNIQUE KEY uk_payments_trade_no (trade_no);
