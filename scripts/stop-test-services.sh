#!/usr/bin/env bash
# Stops what scripts/test-services.sh started for `npm test`: the PostgreSQL cluster on 127.0.0.1:5432 and the Redis on
# 127.0.0.1:6379. Their data is the tests' only (databases the tests create are dropped by them). Safe to run twice.
set -euo pipefail

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if command -v pg_ctlcluster >/dev/null 2>&1; then
  version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
  if pg_lsclusters -h | grep -q "^$version main .* online"; then
    as_root pg_ctlcluster "$version" main stop
    echo "stopped PostgreSQL $version (main)"
  fi
fi
if command -v redis-cli >/dev/null 2>&1 && redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  redis-cli -h 127.0.0.1 -p 6379 shutdown nosave >/dev/null 2>&1 || true
  echo "stopped Redis on 127.0.0.1:6379"
fi
