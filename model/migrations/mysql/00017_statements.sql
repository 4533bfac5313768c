-- +goose Up
-- Provider statements (对账): the ledger checked every day against what each
-- provider says happened (internal/domain/statement).
--
-- payments.paid_at is the provider's own time of the payment (the ledger's
-- created_at when the provider gave none): the statement day it belongs
-- to. stated_on (payments, refunds, disputes) is the statement day that
-- last listed the row; NULL until a run finds it, so "the ledger holds it,
-- the statement does not" is one indexed query. refunds.provider_ref is
-- the provider's id of a refund made outside orderflow (its dashboard),
-- recorded against its payment when a statement lists it.
ALTER TABLE payments
  ADD COLUMN paid_at   DATETIME(3) NULL,
  ADD COLUMN stated_on CHAR(10)    NULL,
  ADD KEY idx_payments_provider_paid (provider, paid_at);
ALTER TABLE refunds
  ADD COLUMN stated_on    CHAR(10)    NULL,
  ADD COLUMN provider_ref VARCHAR(64) NULL,
  ADD UNIQUE KEY uk_refunds_provider_ref (provider, provider_ref),
  ADD KEY idx_refunds_provider_succeeded (provider, succeeded_at);
ALTER TABLE disputes
  ADD COLUMN stated_on CHAR(10) NULL;
UPDATE payments SET paid_at = created_at WHERE paid_at IS NULL;

-- One run of one provider's statement for one of its days. active is 1
-- while the run is queued or running and NULL after: the unique key lets
-- one run per provider and day be in flight (NULLs never collide). The
-- totals are the statement's own, as read.
CREATE TABLE statement_runs (
  id             BIGINT       NOT NULL AUTO_INCREMENT,
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
  created_at     DATETIME(3)  NOT NULL,
  started_at     DATETIME(3)  NULL,
  finished_at    DATETIME(3)  NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_statement_runs_active (provider, day, active),
  KEY idx_statement_runs_day (provider, day, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- A difference between the ledger and a provider's statement, listed once
-- per (provider, kind, ref) however often its day is re-run. ref is the
-- trade number of a payment, the refund's or dispute's id otherwise.
-- action says what the system did about it; an operator resolves what it
-- could not (resolved_by, note).
CREATE TABLE statement_breaks (
  id                    BIGINT       NOT NULL AUTO_INCREMENT,
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
  created_at            DATETIME(3)  NOT NULL,
  resolved_at           DATETIME(3)  NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_statement_breaks_ref (provider, kind, ref),
  KEY idx_statement_breaks_status (status, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE statement_breaks;
DROP TABLE statement_runs;
ALTER TABLE disputes DROP COLUMN stated_on;
ALTER TABLE refunds DROP KEY idx_refunds_provider_succeeded, DROP KEY uk_refunds_provider_ref,
  DROP COLUMN provider_ref, DROP COLUMN stated_on;
ALTER TABLE payments DROP KEY idx_payments_provider_paid, DROP COLUMN stated_on, DROP COLUMN paid_at;
