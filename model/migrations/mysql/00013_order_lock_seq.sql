-- +goose Up
-- lock_seq is bumped by model.LockOrder, the lock that serializes the
-- completions of one order's refunds. A lock must be a write that changes
-- the row: MariaDB writes nothing for an UPDATE that changes no value, so
-- Galera would certify two such locks taken on two nodes without a
-- conflict, and both completions would commit having each seen the other's
-- refund unfinished (the order stranded refunding). The column means
-- nothing else.
ALTER TABLE orders ADD COLUMN lock_seq INT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE orders DROP COLUMN lock_seq;
