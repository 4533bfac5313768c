-- +goose Up
-- As ../mysql/00008_webhooks_and_trace_context.sql.
CREATE TABLE webhooks (
  id              INTEGER      PRIMARY KEY AUTOINCREMENT,
  event_id        VARCHAR(40)  NOT NULL,
  type            VARCHAR(32)  NOT NULL,
  body            BLOB         NOT NULL,
  attempts        INT          NOT NULL DEFAULT 0,
  last_error      VARCHAR(255) NOT NULL DEFAULT '',
  next_attempt_at DATETIME     NOT NULL,
  delivered_at    DATETIME     NULL,
  lease_until     DATETIME     NULL,
  task_gen        INT          NOT NULL DEFAULT 0,
  created_at      DATETIME     NOT NULL
);
CREATE UNIQUE INDEX uk_webhooks_event ON webhooks (event_id);
CREATE INDEX idx_webhooks_delivered ON webhooks (delivered_at, id);

ALTER TABLE outbox ADD COLUMN trace_context VARCHAR(64) NULL;
ALTER TABLE orders ADD COLUMN trace_context VARCHAR(64) NULL;

-- +goose Down
ALTER TABLE orders DROP COLUMN trace_context;
ALTER TABLE outbox DROP COLUMN trace_context;
DROP TABLE webhooks;
