-- +goose Up
-- One row per periodic job and slot: every worker's asynq Scheduler enqueues
-- the job, and the run that inserts this row first is the one that does the
-- work, so a job runs once per slot across the fleet. The latest row per job
-- is also what a starting worker reads to run a slot no worker was alive for.
CREATE TABLE periodic_slots (
  job        VARCHAR(64)  NOT NULL,
  slot_at    DATETIME(3)  NOT NULL,
  claimed_by VARCHAR(128) NOT NULL,
  claimed_at DATETIME(3)  NOT NULL,
  PRIMARY KEY (job, slot_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE periodic_slots;
