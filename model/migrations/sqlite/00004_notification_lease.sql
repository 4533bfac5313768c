-- +goose Up
-- As ../mysql/00004_notification_lease.sql.
ALTER TABLE notifications ADD COLUMN lease_until DATETIME NULL;

-- +goose Down
ALTER TABLE notifications DROP COLUMN lease_until;
