-- +goose Up
-- Bumped by model.LockOrder (the MySQL migration of the same number says
-- why a lock must change the row).
ALTER TABLE orders ADD COLUMN lock_seq INT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE orders DROP COLUMN lock_seq;
