-- +goose Up
-- As ../mysql/00003_groups.sql.
CREATE TABLE `groups` (
  id             INTEGER      PRIMARY KEY AUTOINCREMENT,
  group_no       VARCHAR(32)  NOT NULL,
  owner_user_id  BIGINT       NOT NULL,
  title          VARCHAR(255) NOT NULL,
  price_cents    BIGINT       NOT NULL,
  deadline       DATETIME     NOT NULL,
  status         VARCHAR(10)  NOT NULL,
  settle_gen     INT          NOT NULL DEFAULT 1,
  failure_reason VARCHAR(255) NOT NULL DEFAULT '',
  created_at     DATETIME     NOT NULL,
  updated_at     DATETIME     NOT NULL,
  closed_at      DATETIME     NULL,
  settled_at     DATETIME     NULL
);
CREATE UNIQUE INDEX uk_groups_group_no ON `groups` (group_no);
CREATE INDEX idx_groups_status_deadline ON `groups` (status, deadline);

CREATE TABLE group_participants (
  group_id   BIGINT   NOT NULL,
  user_id    BIGINT   NOT NULL,
  joined_at  DATETIME NOT NULL,
  charged_at DATETIME NULL,
  PRIMARY KEY (group_id, user_id)
);

-- +goose Down
DROP TABLE group_participants;
DROP TABLE `groups`;
