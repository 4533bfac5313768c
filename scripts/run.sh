#!/usr/bin/env bash
# Runs the whole system against MariaDB/Redis at the configured addresses
# (default: localhost): migrations, then the payment simulator, the queue
# worker (with the scheduler) and the API. Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."

: "${ORDERFLOW_MYSQL_DSN:=root@tcp(127.0.0.1:3306)/orderflow}"
: "${ORDERFLOW_ADMIN_TOKEN:=dev-admin-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')}"
: "${ORDERFLOW_PAY_SECRET:=dev-pay-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')}"
: "${ORDERFLOW_API_ADDR:=127.0.0.1:8080}"
: "${ORDERFLOW_QUEUE_ADDR:=127.0.0.1:8081}"
: "${ORDERFLOW_PAYSIM_ADDR:=127.0.0.1:8090}"
export ORDERFLOW_MYSQL_DSN ORDERFLOW_ADMIN_TOKEN ORDERFLOW_PAY_SECRET ORDERFLOW_PAYSIM_ADDR
export ORDERFLOW_PAY_URL="http://$ORDERFLOW_PAYSIM_ADDR" ORDERFLOW_API_URL="http://$ORDERFLOW_API_ADDR"
export ORDERFLOW_LOG_FORMAT="${ORDERFLOW_LOG_FORMAT:-console}"

mkdir -p bin
go build -o bin/api ./api
go build -o bin/queue ./queue
go build -o bin/paysim ./cmd/paysim

bin/api migrate

pids=()
stop() {
  trap - INT TERM EXIT
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait || true
}
trap stop INT TERM EXIT

bin/paysim & pids+=($!)
ORDERFLOW_HTTP_ADDR="$ORDERFLOW_QUEUE_ADDR" bin/queue & pids+=($!)
ORDERFLOW_HTTP_ADDR="$ORDERFLOW_API_ADDR" bin/api & pids+=($!)

for _ in $(seq 1 50); do
  curl -fsS "http://$ORDERFLOW_API_ADDR/readyz" >/dev/null 2>&1 && break
  sleep 0.2
done
cat <<MSG

orderflow is up.
  API          http://$ORDERFLOW_API_ADDR   (readyz: /readyz, metrics: /metrics)
  dashboard    http://$ORDERFLOW_API_ADDR/monitoring/  (user: anything, password: the admin token)
  worker       http://$ORDERFLOW_QUEUE_ADDR (readyz: /readyz)
  pay simulator http://$ORDERFLOW_PAYSIM_ADDR
  admin token  $ORDERFLOW_ADMIN_TOKEN
  pay secret   $ORDERFLOW_PAY_SECRET
Press Ctrl-C to stop.

MSG
wait -n "${pids[@]}"
