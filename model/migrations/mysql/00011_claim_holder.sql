-- +goose Up
-- The worker process that holds a claim (ORDERFLOW_WORKER_LEASE): when its
-- lease in Redis lapses, a survivor releases exactly that worker's claims.
-- The claimed orders are few, so the status index finds them; no index of
-- its own. ADD COLUMN … NULL at the end is instant on MariaDB 10.11.
ALTER TABLE orders ADD COLUMN claimed_by VARCHAR(96) NULL;

-- +goose Down
ALTER TABLE orders DROP COLUMN claimed_by;
