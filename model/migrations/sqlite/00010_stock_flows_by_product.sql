-- +goose Up
-- A product's recent restores, read by every stock counter rebuild (the
-- MySQL migration of the same number says why).
CREATE INDEX idx_stock_flows_product_type_created ON stock_flows (product_id, flow_type, created_at);

-- +goose Down
DROP INDEX idx_stock_flows_product_type_created;
