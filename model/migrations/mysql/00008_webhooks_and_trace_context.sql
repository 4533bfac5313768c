-- +goose Up
-- A shop webhook: one event a move caused, written in the move's
-- transaction, kept until the shop's receiver answers 2xx. body is the exact
-- JSON posted every time (a redelivery is byte-identical, id included);
-- task_gen names the delivery task's generation (the sweep and an operator's
-- retry queue a new one); lease_until keeps two workers from posting the
-- same row at once.
CREATE TABLE webhooks (
  id              BIGINT       NOT NULL AUTO_INCREMENT,
  event_id        VARCHAR(40)  NOT NULL,
  type            VARCHAR(32)  NOT NULL,
  body            BLOB         NOT NULL,
  attempts        INT          NOT NULL DEFAULT 0,
  last_error      VARCHAR(255) NOT NULL DEFAULT '',
  next_attempt_at DATETIME(3)  NOT NULL,
  delivered_at    DATETIME(3)  NULL,
  lease_until     DATETIME(3)  NULL,
  task_gen        INT          NOT NULL DEFAULT 0,
  created_at      DATETIME(3)  NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_webhooks_event (event_id),
  KEY idx_webhooks_delivered (delivered_at, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The W3C traceparent of the span that wrote an outbox row, carried into
-- the asynq task's headers so the worker's span is its child; on an order,
-- the create request's, so its payment (a later request from the provider)
-- joins the order's trace. NULL when tracing is off.
ALTER TABLE outbox ADD COLUMN trace_context VARCHAR(64) NULL;
ALTER TABLE orders ADD COLUMN trace_context VARCHAR(64) NULL;

-- +goose Down
ALTER TABLE orders DROP COLUMN trace_context;
ALTER TABLE outbox DROP COLUMN trace_context;
DROP TABLE webhooks;
