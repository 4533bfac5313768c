-- +goose Up
-- The ledger on SQLite (dev mode): the same tables, keys and rules as
-- ../mysql/00001_core.sql. Times are DATETIME text in UTC with milliseconds,
-- which the store always writes in one format, so they compare in time order.
CREATE TABLE users (
  id             INTEGER      PRIMARY KEY AUTOINCREMENT,
  name           VARCHAR(128) NOT NULL,
  token_hash     CHAR(64)     NOT NULL,
  balance_cents  BIGINT       NOT NULL DEFAULT 0,
  subscription_expires_at DATETIME NULL,
  pending_orders INT          NOT NULL DEFAULT 0,
  created_at     DATETIME     NOT NULL
);
CREATE UNIQUE INDEX uk_users_token_hash ON users (token_hash);

CREATE TABLE products (
  id           INTEGER     PRIMARY KEY AUTOINCREMENT,
  sku          VARCHAR(64) NOT NULL,
  kind         VARCHAR(16) NOT NULL,
  price_cents  BIGINT      NOT NULL,
  days         INT         NOT NULL DEFAULT 0,
  credit_cents BIGINT      NOT NULL DEFAULT 0,
  stock        BIGINT      NULL,
  created_at   DATETIME    NOT NULL
);
CREATE UNIQUE INDEX uk_products_sku ON products (sku);

CREATE TABLE card_keys (
  id         INTEGER      PRIMARY KEY AUTOINCREMENT,
  product_id BIGINT       NOT NULL,
  code       VARCHAR(255) NOT NULL,
  status     VARCHAR(10)  NOT NULL,
  order_id   BIGINT       NULL,
  updated_at DATETIME     NOT NULL
);
CREATE UNIQUE INDEX uk_card_keys_code ON card_keys (code);
CREATE INDEX idx_card_keys_product_status ON card_keys (product_id, status);
CREATE INDEX idx_card_keys_order ON card_keys (order_id);

CREATE TABLE orders (
  id            INTEGER      PRIMARY KEY AUTOINCREMENT,
  order_no      VARCHAR(32)  NOT NULL,
  user_id       BIGINT       NOT NULL,
  product_id    BIGINT       NOT NULL,
  kind          VARCHAR(16)  NOT NULL,
  quantity      INT          NOT NULL,
  amount_cents  BIGINT       NOT NULL,
  status        TINYINT      NOT NULL,
  trade_no      VARCHAR(64)  NULL,
  activate_gen  INT          NOT NULL DEFAULT 0,
  attempts      INT          NOT NULL DEFAULT 0,
  claim_token   CHAR(32)     NULL,
  claim_task_id VARCHAR(128) NULL,
  claimed_at    DATETIME     NULL,
  created_at    DATETIME     NOT NULL,
  updated_at    DATETIME     NOT NULL,
  expire_at     DATETIME     NOT NULL,
  paid_at       DATETIME     NULL,
  finished_at   DATETIME     NULL,
  closed_at     DATETIME     NULL
);
CREATE UNIQUE INDEX uk_orders_order_no ON orders (order_no);
CREATE INDEX idx_orders_user_status ON orders (user_id, status);
CREATE INDEX idx_orders_status_updated ON orders (status, updated_at);

CREATE TABLE order_effects (
  order_id   BIGINT       NOT NULL,
  effect     VARCHAR(32)  NOT NULL,
  detail     VARCHAR(255) NOT NULL DEFAULT '',
  created_at DATETIME     NOT NULL,
  PRIMARY KEY (order_id, effect)
);

CREATE TABLE wallet_entries (
  id           INTEGER     PRIMARY KEY AUTOINCREMENT,
  user_id      BIGINT      NOT NULL,
  kind         VARCHAR(16) NOT NULL,
  ref          VARCHAR(96) NOT NULL,
  amount_cents BIGINT      NOT NULL,
  created_at   DATETIME    NOT NULL
);
CREATE UNIQUE INDEX uk_wallet_entries_ref ON wallet_entries (ref);
CREATE INDEX idx_wallet_entries_user ON wallet_entries (user_id);

CREATE TABLE stock_flows (
  id         INTEGER  PRIMARY KEY AUTOINCREMENT,
  product_id BIGINT   NOT NULL,
  order_id   BIGINT   NOT NULL,
  flow_type  TINYINT  NOT NULL,
  quantity   INT      NOT NULL,
  created_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX uk_stock_flows_order_type ON stock_flows (order_id, flow_type);

CREATE TABLE payments (
  id           INTEGER     PRIMARY KEY AUTOINCREMENT,
  trade_no     VARCHAR(64) NOT NULL,
  order_id     BIGINT      NOT NULL,
  amount_cents BIGINT      NOT NULL,
  disposition  VARCHAR(16) NOT NULL,
  created_at   DATETIME    NOT NULL
);
CREATE UNIQUE INDEX uk_payments_trade_no ON payments (trade_no);
CREATE INDEX idx_payments_order ON payments (order_id);

CREATE TABLE events (
  id          INTEGER     PRIMARY KEY AUTOINCREMENT,
  object_type VARCHAR(16) NOT NULL,
  object_no   VARCHAR(64) NOT NULL,
  from_status VARCHAR(16) NOT NULL,
  to_status   VARCHAR(16) NOT NULL,
  reason      VARCHAR(64) NOT NULL,
  created_at  DATETIME    NOT NULL
);
CREATE INDEX idx_events_object ON events (object_type, object_no);

CREATE TABLE outbox (
  id         INTEGER      PRIMARY KEY AUTOINCREMENT,
  task_id    VARCHAR(128) NOT NULL,
  task_type  VARCHAR(64)  NOT NULL,
  payload    BLOB         NOT NULL,
  process_at DATETIME     NOT NULL,
  created_at DATETIME     NOT NULL
);
CREATE UNIQUE INDEX uk_outbox_task_id ON outbox (task_id);

CREATE TABLE notifications (
  id           INTEGER      PRIMARY KEY AUTOINCREMENT,
  notify_id    VARCHAR(128) NOT NULL,
  kind         VARCHAR(32)  NOT NULL,
  subject      VARCHAR(255) NOT NULL,
  recipient    VARCHAR(64)  NOT NULL,
  message      TEXT         NOT NULL,
  attempts     INT          NOT NULL DEFAULT 0,
  last_error   VARCHAR(255) NOT NULL DEFAULT '',
  created_at   DATETIME     NOT NULL,
  delivered_at DATETIME     NULL
);
CREATE UNIQUE INDEX uk_notifications_notify_id ON notifications (notify_id);
CREATE INDEX idx_notifications_delivered ON notifications (delivered_at);

CREATE TABLE idempotency_keys (
  user_id    BIGINT       NOT NULL,
  idem_key   VARCHAR(128) NOT NULL,
  order_id   BIGINT       NOT NULL,
  created_at DATETIME     NOT NULL,
  PRIMARY KEY (user_id, idem_key)
);

-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE notifications;
DROP TABLE outbox;
DROP TABLE events;
DROP TABLE payments;
DROP TABLE stock_flows;
DROP TABLE wallet_entries;
DROP TABLE order_effects;
DROP TABLE orders;
DROP TABLE card_keys;
DROP TABLE products;
DROP TABLE users;
