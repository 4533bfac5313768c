-- +goose Up
-- An Idempotency-Key is 1..255 bytes of visible ASCII (checked before any
-- write, order/idempotency.go). request_hash is the fingerprint of the create
-- that reserved the key (sha256 of its product and quantity, hex): the same
-- key with another fingerprint is refused (422), not replayed. Keys reserved
-- before this migration have '' and replay as before.
ALTER TABLE idempotency_keys
  MODIFY idem_key VARCHAR(255) NOT NULL,
  ADD COLUMN request_hash CHAR(64) NOT NULL DEFAULT '' AFTER idem_key;

-- +goose Down
DELETE FROM idempotency_keys WHERE LENGTH(idem_key) > 128;
ALTER TABLE idempotency_keys
  DROP COLUMN request_hash,
  MODIFY idem_key VARCHAR(128) NOT NULL;
