#!/bin/sh
# Installs what `make test-ha` needs when it is missing: the Galera provider,
# mariadb-backup (the SST method) and redis-sentinel. Needs root (apt-get).
set -e
need=""
[ -e /usr/lib/galera/libgalera_smm.so ] || [ -e /usr/lib/libgalera_smm.so ] || need="$need galera-4"
command -v mariadb-backup >/dev/null 2>&1 || need="$need mariadb-backup"
command -v redis-sentinel >/dev/null 2>&1 || need="$need redis-sentinel"
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || need="$need mariadb-server"
[ -z "$need" ] && exit 0
echo "installing:$need"
apt-get install -y $need >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y $need; }
