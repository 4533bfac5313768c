-- +goose Up
-- The ledger. Money is BIGINT cents, times are UTC DATETIME(3). Every unique key
-- below backs a rule: one order per order_no, one key per code, one effect per
-- order, one payment per trade, one task per outbox task ID.
CREATE TABLE users (
  id             BIGINT      NOT NULL AUTO_INCREMENT,
  name           VARCHAR(128) NOT NULL,
  token_hash     CHAR(64)    NOT NULL,
  balance_cents  BIGINT      NOT NULL DEFAULT 0,
  subscription_expires_at DATETIME(3) NULL,
  -- pending_orders is the per-buyer cap counter, moved only by conditional UPDATEs.
  pending_orders INT         NOT NULL DEFAULT 0,
  created_at     DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_users_token_hash (token_hash)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE products (
  id           BIGINT      NOT NULL AUTO_INCREMENT,
  sku          VARCHAR(64) NOT NULL,
  kind         VARCHAR(16) NOT NULL,
  price_cents  BIGINT      NOT NULL,
  days         INT         NOT NULL DEFAULT 0,
  credit_cents BIGINT      NOT NULL DEFAULT 0,
  -- stock is only for subscription/recharge products; NULL means unlimited.
  -- A card product's stock is its count of UNSOLD + RECYCLED keys.
  stock        BIGINT      NULL,
  created_at   DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_products_sku (sku)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE card_keys (
  id         BIGINT       NOT NULL AUTO_INCREMENT,
  product_id BIGINT       NOT NULL,
  code       VARCHAR(255) NOT NULL,
  status     VARCHAR(10)  NOT NULL,
  order_id   BIGINT       NULL,
  updated_at DATETIME(3)  NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_card_keys_code (code),
  KEY idx_card_keys_product_status (product_id, status),
  KEY idx_card_keys_order (order_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE orders (
  id            BIGINT       NOT NULL AUTO_INCREMENT,
  order_no      VARCHAR(32)  NOT NULL,
  user_id       BIGINT       NOT NULL,
  product_id    BIGINT       NOT NULL,
  kind          VARCHAR(16)  NOT NULL,
  quantity      INT          NOT NULL,
  amount_cents  BIGINT       NOT NULL,
  status        TINYINT      NOT NULL,
  trade_no      VARCHAR(64)  NULL,
  -- activate_gen is bumped whenever the order re-enters the queue, so task IDs
  -- (order:activate:<order_no>:<gen>) never collide with an archived task.
  activate_gen  INT          NOT NULL DEFAULT 0,
  attempts      INT          NOT NULL DEFAULT 0,
  claim_token   CHAR(32)     NULL,
  claim_task_id VARCHAR(128) NULL,
  claimed_at    DATETIME(3)  NULL,
  created_at    DATETIME(3)  NOT NULL,
  updated_at    DATETIME(3)  NOT NULL,
  expire_at     DATETIME(3)  NOT NULL,
  paid_at       DATETIME(3)  NULL,
  finished_at   DATETIME(3)  NULL,
  closed_at     DATETIME(3)  NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_orders_order_no (order_no),
  KEY idx_orders_user_status (user_id, status),
  KEY idx_orders_status_updated (status, updated_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- One row per applied delivery effect: inserting it is what makes the effect
-- happen at most once.
CREATE TABLE order_effects (
  order_id   BIGINT      NOT NULL,
  effect     VARCHAR(32) NOT NULL,
  detail     VARCHAR(255) NOT NULL DEFAULT '',
  created_at DATETIME(3) NOT NULL,
  PRIMARY KEY (order_id, effect)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Wallet ledger: balance = sum(amount_cents). ref is unique per effect.
CREATE TABLE wallet_entries (
  id           BIGINT      NOT NULL AUTO_INCREMENT,
  user_id      BIGINT      NOT NULL,
  kind         VARCHAR(16) NOT NULL,
  ref          VARCHAR(96) NOT NULL,
  amount_cents BIGINT      NOT NULL,
  created_at   DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_wallet_entries_ref (ref),
  KEY idx_wallet_entries_user (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Stock flow: 1 lock, 2 sell, 3 close restore, 4 refund restore; once per order and type.
CREATE TABLE stock_flows (
  id         BIGINT      NOT NULL AUTO_INCREMENT,
  product_id BIGINT      NOT NULL,
  order_id   BIGINT      NOT NULL,
  flow_type  TINYINT     NOT NULL,
  quantity   INT         NOT NULL,
  created_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_stock_flows_order_type (order_id, flow_type)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE payments (
  id           BIGINT      NOT NULL AUTO_INCREMENT,
  trade_no     VARCHAR(64) NOT NULL,
  order_id     BIGINT      NOT NULL,
  amount_cents BIGINT      NOT NULL,
  -- disposition: applied (moved the order to paid), or why it must be refunded.
  disposition  VARCHAR(16) NOT NULL,
  created_at   DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_payments_trade_no (trade_no),
  KEY idx_payments_order (order_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Event history: every status move of every object, written in the move's transaction.
CREATE TABLE events (
  id          BIGINT      NOT NULL AUTO_INCREMENT,
  object_type VARCHAR(16) NOT NULL,
  object_no   VARCHAR(64) NOT NULL,
  from_status VARCHAR(16) NOT NULL,
  to_status   VARCHAR(16) NOT NULL,
  reason      VARCHAR(64) NOT NULL,
  created_at  DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  KEY idx_events_object (object_type, object_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Transactional outbox: committed with the row that makes the task necessary,
-- deleted once asynq holds the task.
CREATE TABLE outbox (
  id         BIGINT       NOT NULL AUTO_INCREMENT,
  task_id    VARCHAR(128) NOT NULL,
  task_type  VARCHAR(64)  NOT NULL,
  payload    BLOB         NOT NULL,
  process_at DATETIME(3)  NOT NULL,
  created_at DATETIME(3)  NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_outbox_task_id (task_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Owner and admin notifications; notify_id is stable across redeliveries.
CREATE TABLE notifications (
  id           BIGINT       NOT NULL AUTO_INCREMENT,
  notify_id    VARCHAR(128) NOT NULL,
  kind         VARCHAR(32)  NOT NULL,
  subject      VARCHAR(255) NOT NULL,
  recipient    VARCHAR(64)  NOT NULL,
  message      TEXT         NOT NULL,
  attempts     INT          NOT NULL DEFAULT 0,
  last_error   VARCHAR(255) NOT NULL DEFAULT '',
  created_at   DATETIME(3)  NOT NULL,
  delivered_at DATETIME(3)  NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_notifications_notify_id (notify_id),
  KEY idx_notifications_delivered (delivered_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE idempotency_keys (
  user_id    BIGINT       NOT NULL,
  idem_key   VARCHAR(128) NOT NULL,
  order_id   BIGINT       NOT NULL,
  created_at DATETIME(3)  NOT NULL,
  PRIMARY KEY (user_id, idem_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

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
