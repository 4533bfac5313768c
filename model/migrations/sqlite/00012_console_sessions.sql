-- +goose Up
-- As ../mysql/00011_console_sessions.sql.
CREATE TABLE console_sessions (
  id         CHAR(32) NOT NULL,
  created_at DATETIME NOT NULL,
  expires_at DATETIME NOT NULL,
  ended_at   DATETIME NULL,
  PRIMARY KEY (id)
);
CREATE INDEX idx_console_sessions_expires ON console_sessions (expires_at);

-- +goose Down
DROP TABLE console_sessions;
