-- +goose Up
-- lease_until: a delivery round claims a notification before posting it, so
-- two rounds (overlapping, or on two workers) never post the same one.
ALTER TABLE notifications ADD COLUMN lease_until DATETIME(3) NULL AFTER delivered_at;

-- +goose Down
ALTER TABLE notifications DROP COLUMN lease_until;
