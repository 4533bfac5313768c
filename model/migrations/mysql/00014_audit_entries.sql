-- +goose Up
-- The audit trail: one row per admin action that moved money or state,
-- written in the transaction of its effect (so an action that rolled back
-- or changed nothing leaves none). actor is the operator's name; detail is
-- a JSON object of what changed. Read one object's trail by (object, id).
CREATE TABLE audit_entries (
  id     BIGINT       NOT NULL AUTO_INCREMENT,
  at     DATETIME(3)  NOT NULL,
  actor  VARCHAR(64)  NOT NULL,
  action VARCHAR(32)  NOT NULL,
  object VARCHAR(64)  NOT NULL,
  detail TEXT         NOT NULL,
  PRIMARY KEY (id),
  KEY idx_audit_entries_object (object, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE audit_entries;
