#!/usr/bin/env bash
# Starts the local MariaDB and Redis if they are not answering (CI and dev
# machines); leaves running ones alone.
set -euo pipefail

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "starting redis-server"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
fi
if ! mysqladmin -h 127.0.0.1 -uroot ping >/dev/null 2>&1; then
  echo "starting mariadbd"
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
fi
for _ in $(seq 1 60); do
  if redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && mysqladmin -h 127.0.0.1 -uroot ping >/dev/null 2>&1; then
    exit 0
  fi
  sleep 1
done
echo "MariaDB or Redis did not come up" >&2
exit 1
