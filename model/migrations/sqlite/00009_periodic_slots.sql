-- +goose Up
-- As ../mysql/00009_periodic_slots.sql.
CREATE TABLE periodic_slots (
  job        VARCHAR(64)  NOT NULL,
  slot_at    DATETIME     NOT NULL,
  claimed_by VARCHAR(128) NOT NULL,
  claimed_at DATETIME     NOT NULL,
  PRIMARY KEY (job, slot_at)
);

-- +goose Down
DROP TABLE periodic_slots;
