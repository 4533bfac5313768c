-- +goose Up
-- A stock counter's rebuild (order.SnapshotFor: the create that finds no
-- counter, the reconciliation, the sweep's repair) reads a product's recent
-- close and refund restores. Without this index that read scanned every
-- stock flow ever written — two per finished order: 16 s per product with
-- 200,000 orders in the ledger (make bench, growth phase), while the creates
-- waiting for the counter queued behind it.
ALTER TABLE stock_flows ADD KEY idx_stock_flows_product_type_created (product_id, flow_type, created_at);

-- +goose Down
ALTER TABLE stock_flows DROP KEY idx_stock_flows_product_type_created;
