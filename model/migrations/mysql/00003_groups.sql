-- +goose Up
CREATE TABLE `groups` (
  id             BIGINT       NOT NULL AUTO_INCREMENT,
  group_no       VARCHAR(32)  NOT NULL,
  owner_user_id  BIGINT       NOT NULL,
  title          VARCHAR(255) NOT NULL,
  price_cents    BIGINT       NOT NULL,
  deadline       DATETIME(3)  NOT NULL,
  status         VARCHAR(10)  NOT NULL,
  -- settle_gen: generation of the group:settle task (recovery, operator retry).
  settle_gen     INT          NOT NULL DEFAULT 1,
  failure_reason VARCHAR(255) NOT NULL DEFAULT '',
  created_at     DATETIME(3)  NOT NULL,
  updated_at     DATETIME(3)  NOT NULL,
  closed_at      DATETIME(3)  NULL,
  settled_at     DATETIME(3)  NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_groups_group_no (group_no),
  KEY idx_groups_status_deadline (status, deadline)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE group_participants (
  group_id   BIGINT      NOT NULL,
  user_id    BIGINT      NOT NULL,
  joined_at  DATETIME(3) NOT NULL,
  charged_at DATETIME(3) NULL,
  PRIMARY KEY (group_id, user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE group_participants;
DROP TABLE `groups`;
