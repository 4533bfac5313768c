-- +goose Up
-- As ../mysql/00014_audit_entries.sql.
CREATE TABLE audit_entries (
  id     INTEGER     PRIMARY KEY AUTOINCREMENT,
  at     DATETIME    NOT NULL,
  actor  VARCHAR(64) NOT NULL,
  action VARCHAR(32) NOT NULL,
  object VARCHAR(64) NOT NULL,
  detail TEXT        NOT NULL
);
CREATE INDEX idx_audit_entries_object ON audit_entries (object, id);

-- +goose Down
DROP TABLE audit_entries;
