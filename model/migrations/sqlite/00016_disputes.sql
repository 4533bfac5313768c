-- +goose Up
-- As ../mysql/00016_disputes.sql.
CREATE TABLE disputes (
  id              INTEGER     PRIMARY KEY AUTOINCREMENT,
  dispute_id      VARCHAR(64) NOT NULL,
  provider        VARCHAR(16) NOT NULL,
  trade_no        VARCHAR(64) NOT NULL,
  order_id        BIGINT      NOT NULL,
  order_no        VARCHAR(32) NOT NULL,
  status          VARCHAR(32) NOT NULL,
  reason          VARCHAR(64) NOT NULL,
  amount_cents    BIGINT      NOT NULL,
  lost_cents      BIGINT      NOT NULL DEFAULT 0,
  flag            VARCHAR(32) NOT NULL DEFAULT '',
  evidence_due_by DATETIME    NULL,
  created_at      DATETIME    NOT NULL,
  updated_at      DATETIME    NOT NULL,
  closed_at       DATETIME    NULL
);
CREATE UNIQUE INDEX uk_disputes_dispute_id ON disputes (dispute_id);
CREATE INDEX idx_disputes_order ON disputes (order_id);
CREATE INDEX idx_disputes_open ON disputes (closed_at, id);

-- +goose Down
DROP TABLE disputes;
