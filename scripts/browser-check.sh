#!/usr/bin/env bash
# Headless-browser check of the operator dashboard: starts the whole system
# (scripts/run.sh) on ports, a database and a Redis DB of its own, puts a
# little work through it, then has headless Chromium (Debian's package) load
# /monitoring/ with the admin token as the Basic-auth password. It checks
# that the page lists the queues, that the same page without the token shows
# no dashboard, saves a screenshot to tmp/monitoring.png, and stops
# everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."

API_ADDR=127.0.0.1:18080
QUEUE_ADDR=127.0.0.1:18081
PAYSIM_ADDR=127.0.0.1:18090
DB=orderflow_browser
TOKEN=browser-check-admin-token-0001
OUT=tmp
mkdir -p "$OUT"
: >"$OUT/browser-chromium.log"

if ! command -v chromium >/dev/null 2>&1; then
  echo "installing Debian's chromium"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

./scripts/services.sh

# A Redis DB number of our own: take the reservation the test suites honour
# (orderflow:testdb:N in DB 0), preferring 14.
RESERVED=""
for n in 14 13 12 11 10 9 8 7 6 5 4 3 2 1; do
  if [ "$(redis-cli -h 127.0.0.1 -p 6379 SET "orderflow:testdb:$n" browser-check NX EX 1200)" = OK ]; then
    RESERVED=$n
    break
  fi
done
[ -n "$RESERVED" ] || { echo "no free Redis DB number" >&2; exit 1; }
redis-cli -h 127.0.0.1 -p 6379 -n "$RESERVED" FLUSHDB >/dev/null
mysql -h 127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS $DB"

PROFILE=$(mktemp -d)
RUN_PID=""
cleanup() {
  status=$?
  trap - EXIT INT TERM
  if [ -n "$RUN_PID" ]; then
    kill -TERM "$RUN_PID" 2>/dev/null || true
    wait "$RUN_PID" 2>/dev/null || true
  fi
  redis-cli -h 127.0.0.1 -p 6379 -n "$RESERVED" FLUSHDB >/dev/null 2>&1 || true
  redis-cli -h 127.0.0.1 -p 6379 DEL "orderflow:testdb:$RESERVED" >/dev/null 2>&1 || true
  mysql -h 127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
  rm -rf "$PROFILE"
  exit "$status"
}
trap cleanup EXIT INT TERM

ORDERFLOW_MYSQL_DSN="root@tcp(127.0.0.1:3306)/$DB" \
ORDERFLOW_REDIS_DB="$RESERVED" \
ORDERFLOW_ADMIN_TOKEN="$TOKEN" \
ORDERFLOW_PAY_SECRET=browser-check-pay-secret \
ORDERFLOW_API_ADDR="$API_ADDR" ORDERFLOW_QUEUE_ADDR="$QUEUE_ADDR" ORDERFLOW_PAYSIM_ADDR="$PAYSIM_ADDR" \
ORDERFLOW_LOG_LEVEL=warn \
  ./scripts/run.sh >"$OUT/browser-run.log" 2>&1 &
RUN_PID=$!

ready=""
for _ in $(seq 1 300); do
  if curl -fsS "http://$API_ADDR/readyz" >/dev/null 2>&1 && curl -fsS "http://$QUEUE_ADDR/readyz" >/dev/null 2>&1; then
    ready=1
    break
  fi
  kill -0 "$RUN_PID" 2>/dev/null || break
  sleep 0.5
done
[ -n "$ready" ] || { echo "the system did not come up; log:" >&2; cat "$OUT/browser-run.log" >&2; exit 1; }
echo "system up (Redis DB $RESERVED, database $DB)"

# A little work: a buyer, a card product, three orders; two paid (delivered
# through the critical queue), one left pending (its close waits in the
# close queue).
API="http://$API_ADDR"
A="Authorization: Bearer $TOKEN"
field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p"; }
BUYER=$(curl -fsS -XPOST "$API/api/v1/admin/users" -H "$A" -d '{"name":"browser","balance_cents":0}' | field token)
PID=$(curl -fsS -XPOST "$API/api/v1/admin/products" -H "$A" -d '{"sku":"browser-card","kind":"card","price_cents":500}' | field id)
curl -fsS -XPOST "$API/api/v1/admin/products/$PID/cards" -H "$A" -d '{"codes":["BR-1","BR-2","BR-3"]}' >/dev/null
orders=()
for _ in 1 2 3; do
  orders+=("$(curl -fsS -XPOST "$API/api/v1/orders" -H "Authorization: Bearer $BUYER" -d "{\"product_id\":$PID,\"quantity\":1}" | field order_no)")
done
for o in "${orders[0]}" "${orders[1]}"; do
  curl -fsS -XPOST "http://$PAYSIM_ADDR/admin/pay" -d "{\"order_no\":\"$o\",\"amount_cents\":500}" >/dev/null
done
for o in "${orders[0]}" "${orders[1]}"; do
  status=""
  for _ in $(seq 1 100); do
    status=$(curl -fsS "$API/api/v1/orders/$o" -H "Authorization: Bearer $BUYER" | field status)
    [ "$status" = finished ] && break
    sleep 0.1
  done
  [ "$status" = finished ] || { echo "order $o did not finish (status $status)" >&2; exit 1; }
done
echo "work done: ${orders[0]} and ${orders[1]} finished, ${orders[2]} pending"

chrome() {
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --disable-dev-shm-usage --user-data-dir="$PROFILE" --window-size=1400,900 \
    --virtual-time-budget=8000 "$@" 2>>"$OUT/browser-chromium.log"
}
URL="http://ops:$TOKEN@$API_ADDR/monitoring/"

chrome --dump-dom "$URL" >"$OUT/monitoring.html"
chrome --screenshot="$OUT/monitoring.png" "$URL" >/dev/null
# Without the token: a browser gets the Basic challenge (headless Chromium,
# which cannot show the login prompt, gives up on the page), never the dashboard.
chrome --dump-dom "http://$API_ADDR/monitoring/" >"$OUT/monitoring-noauth.html" 2>>"$OUT/browser-chromium.log" || true
noauth=$(curl -sS -o /dev/null -D - "http://$API_ADDR/monitoring/" | tr -d '\r')

fail=""
for q in critical close low; do
  grep -q ">$q<" "$OUT/monitoring.html" || { echo "dashboard does not list queue $q" >&2; fail=1; }
done
grep -q "Queues" "$OUT/monitoring.html" || { echo "dashboard has no Queues section" >&2; fail=1; }
if grep -q ">critical<" "$OUT/monitoring-noauth.html"; then
  echo "the dashboard showed queues without the admin token" >&2; fail=1
fi
if ! grep -q "^HTTP/1.1 401" <<<"$noauth" || ! grep -qi "^WWW-Authenticate: Basic" <<<"$noauth"; then
  echo "no 401 with a Basic challenge without the token: $noauth" >&2; fail=1
fi
[ -s "$OUT/monitoring.png" ] || { echo "no screenshot" >&2; fail=1; }
if [ -n "$fail" ]; then
  echo "see $OUT/monitoring.html, $OUT/monitoring-noauth.html, $OUT/browser-chromium.log" >&2
  exit 1
fi
echo "browser check passed: the dashboard lists the queues; screenshot $OUT/monitoring.png"
