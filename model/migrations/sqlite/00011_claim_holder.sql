-- +goose Up
-- The worker process that holds a claim (the MySQL migration of the same
-- number says why).
ALTER TABLE orders ADD COLUMN claimed_by VARCHAR(96) NULL;

-- +goose Down
ALTER TABLE orders DROP COLUMN claimed_by;
