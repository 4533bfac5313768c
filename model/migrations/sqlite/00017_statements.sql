-- +goose Up
-- As ../mysql/00017_statements.sql.
ALTER TABLE payments ADD COLUMN paid_at DATETIME NULL;
ALTER TABLE payments ADD COLUMN stated_on CHAR(10) NULL;
CREATE INDEX idx_payments_provider_paid ON payments (provider, paid_at);
ALTER TABLE refunds ADD COLUMN stated_on CHAR(10) NULL;
ALTER TABLE refunds ADD COLUMN provider_ref VARCHAR(64) NULL;
CREATE UNIQUE INDEX uk_refunds_provider_ref ON refunds (provider, provider_ref);
CREATE INDEX idx_refunds_provider_succeeded ON refunds (provider, succeeded_at);
ALTER TABLE disputes ADD COLUMN stated_on CHAR(10) NULL;
UPDATE payments SET paid_at = created_at WHERE paid_at IS NULL;

CREATE TABLE statement_runs (
  id             INTEGER      PRIMARY KEY AUTOINCREMENT,
  provider       VARCHAR(16)  NOT NULL,
  day            CHAR(10)     NOT NULL,
  status         VARCHAR(16)  NOT NULL,
  active         TINYINT      NULL DEFAULT 1,
  task_gen       INT          NOT NULL DEFAULT 1,
  provider_lines BIGINT       NOT NULL DEFAULT 0,
  matched        BIGINT       NOT NULL DEFAULT 0,
  payments       BIGINT       NOT NULL DEFAULT 0,
  gross_cents    BIGINT       NOT NULL DEFAULT 0,
  refunds        BIGINT       NOT NULL DEFAULT 0,
  refunds_cents  BIGINT       NOT NULL DEFAULT 0,
  disputes_cents BIGINT       NOT NULL DEFAULT 0,
  fees_cents     BIGINT       NOT NULL DEFAULT 0,
  error          VARCHAR(512) NOT NULL DEFAULT '',
  created_at     DATETIME     NOT NULL,
  started_at     DATETIME     NULL,
  finished_at    DATETIME     NULL
);
CREATE UNIQUE INDEX uk_statement_runs_active ON statement_runs (provider, day, active);
CREATE INDEX idx_statement_runs_day ON statement_runs (provider, day, id);

CREATE TABLE statement_breaks (
  id                    INTEGER      PRIMARY KEY AUTOINCREMENT,
  provider              VARCHAR(16)  NOT NULL,
  day                   CHAR(10)     NOT NULL,
  kind                  VARCHAR(24)  NOT NULL,
  ref                   VARCHAR(64)  NOT NULL,
  trade_no              VARCHAR(64)  NOT NULL DEFAULT '',
  order_no              VARCHAR(64)  NOT NULL DEFAULT '',
  refund_no             VARCHAR(64)  NOT NULL DEFAULT '',
  provider_amount_cents BIGINT       NULL,
  ledger_amount_cents   BIGINT       NULL,
  status                VARCHAR(16)  NOT NULL,
  action                VARCHAR(255) NOT NULL DEFAULT '',
  note                  VARCHAR(512) NOT NULL DEFAULT '',
  resolved_by           VARCHAR(64)  NOT NULL DEFAULT '',
  run_id                BIGINT       NOT NULL,
  created_at            DATETIME     NOT NULL,
  resolved_at           DATETIME     NULL
);
CREATE UNIQUE INDEX uk_statement_breaks_ref ON statement_breaks (provider, kind, ref);
CREATE INDEX idx_statement_breaks_status ON statement_breaks (status, id);

-- +goose Down
DROP TABLE statement_breaks;
DROP TABLE statement_runs;
