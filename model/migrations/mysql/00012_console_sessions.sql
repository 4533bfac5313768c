-- +goose Up
-- One row per log-in to the operator console. The session cookie names its
-- row (and is signed with a key derived from the admin token); a request is
-- admitted only while the row is there without ended_at, so "Log out" ends
-- the session on every API process, and every copy of its cookie with it.
-- A log-in deletes the rows past expires_at: their cookies have expired.
CREATE TABLE console_sessions (
  id         CHAR(32)    NOT NULL,
  created_at DATETIME(3) NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  ended_at   DATETIME(3) NULL,
  PRIMARY KEY (id),
  KEY idx_console_sessions_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE console_sessions;
