#!/usr/bin/env bash
# Drives the README walkthrough against a running system (make run or make run-mysql):
# ORDERFLOW_ADMIN_TOKEN must be the admin token it printed.
set -euo pipefail
API="${API:-http://127.0.0.1:8080}"
PAYSIM="${PAYSIM:-http://127.0.0.1:8090}"
A="Authorization: Bearer ${ORDERFLOW_ADMIN_TOKEN:?set ORDERFLOW_ADMIN_TOKEN to the admin token the run command printed}"
json() { python3 -c "import sys,json; print(json.load(sys.stdin)$1)"; }
sku="steam-50-$RANDOM$RANDOM"

BUYER=$(curl -fsS -XPOST "$API/api/v1/admin/users" -H "$A" -d '{"name":"ann","balance_cents":0}' | json '["token"]')
PID=$(curl -fsS -XPOST "$API/api/v1/admin/products" -H "$A" -d "{\"sku\":\"$sku\",\"kind\":\"card\",\"price_cents\":5000}" | json '["id"]')
curl -fsS -XPOST "$API/api/v1/admin/products/$PID/cards" -H "$A" -d "{\"codes\":[\"$sku-1\",\"$sku-2\",\"$sku-3\"]}" >/dev/null
ORDER=$(curl -fsS -XPOST "$API/api/v1/orders" -H "Authorization: Bearer $BUYER" -d "{\"product_id\":$PID,\"quantity\":1}" | json '["order_no"]')
echo "order $ORDER created (pending)"
curl -fsS -XPOST "$PAYSIM/admin/pay" -d "{\"order_no\":\"$ORDER\",\"amount_cents\":5000}" >/dev/null
echo "payment notification sent"
for _ in $(seq 1 50); do
  status=$(curl -fsS "$API/api/v1/orders/$ORDER" -H "Authorization: Bearer $BUYER" | json '["status"]')
  [ "$status" = finished ] && break
  sleep 0.2
done
curl -fsS "$API/api/v1/orders/$ORDER" -H "Authorization: Bearer $BUYER"; echo
[ "$status" = finished ] || { echo "order did not finish (status $status)" >&2; exit 1; }
echo "order $ORDER finished"
