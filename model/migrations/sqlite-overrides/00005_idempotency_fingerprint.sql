-- +goose Up
-- As ../mysql/00005_idempotency_fingerprint.sql. SQLite cannot change a
-- column's type in place, so the table is rebuilt.
CREATE TABLE idempotency_keys_new (
  user_id      BIGINT       NOT NULL,
  idem_key     VARCHAR(255) NOT NULL,
  request_hash CHAR(64)     NOT NULL DEFAULT '',
  order_id     BIGINT       NOT NULL,
  created_at   DATETIME     NOT NULL,
  PRIMARY KEY (user_id, idem_key)
);
INSERT INTO idempotency_keys_new (user_id, idem_key, order_id, created_at)
  SELECT user_id, idem_key, order_id, created_at FROM idempotency_keys;
DROP TABLE idempotency_keys;
ALTER TABLE idempotency_keys_new RENAME TO idempotency_keys;

-- +goose Down
CREATE TABLE idempotency_keys_old (
  user_id    BIGINT       NOT NULL,
  idem_key   VARCHAR(128) NOT NULL,
  order_id   BIGINT       NOT NULL,
  created_at DATETIME     NOT NULL,
  PRIMARY KEY (user_id, idem_key)
);
INSERT INTO idempotency_keys_old (user_id, idem_key, order_id, created_at)
  SELECT user_id, idem_key, order_id, created_at FROM idempotency_keys WHERE LENGTH(idem_key) <= 128;
DROP TABLE idempotency_keys;
ALTER TABLE idempotency_keys_old RENAME TO idempotency_keys;
