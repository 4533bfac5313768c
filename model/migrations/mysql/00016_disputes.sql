-- +goose Up
-- Card disputes (chargebacks) the provider told us about: one row per
-- dispute_id, however often its events arrive. status is the
-- provider's (Stripe: warning_needs_response … won, lost), moved only
-- forward by a conditional UPDATE (model.DisputeMachine). flag says what
-- made it suspect when it opened: not_delivered (the order never
-- finished), already_refunded (a refund of the trade existed), or ''.
-- lost_cents is the money the provider took back, set once when it closes
-- lost: the money audit counts it beside the refunds.
CREATE TABLE disputes (
  id              BIGINT      NOT NULL AUTO_INCREMENT,
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
  evidence_due_by DATETIME(3) NULL,
  created_at      DATETIME(3) NOT NULL,
  updated_at      DATETIME(3) NOT NULL,
  closed_at       DATETIME(3) NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_disputes_dispute_id (dispute_id),
  KEY idx_disputes_order (order_id),
  KEY idx_disputes_open (closed_at, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE disputes;
