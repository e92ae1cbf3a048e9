#!/usr/bin/env bash
# Starts the PostgreSQL and Redis that the storage, limiter and scale-out tests use, on 127.0.0.1
# only, and creates the test role. Idempotent: `npm test` runs it every time (pretest), .ci/run too.
# It installs nothing: scripts/test-prerequisites.sh, the step before it, installs Debian's postgresql and redis-server.
set -euo pipefail

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
as_postgres() { if [ "$(id -u)" -eq 0 ]; then su postgres -c "$1"; else sudo -u postgres sh -c "$1"; fi; }

if command -v pg_ctlcluster >/dev/null 2>&1; then
  version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
  if ! pg_lsclusters -h | grep -q "^$version main"; then as_root pg_createcluster "$version" main >/dev/null; fi
  if ! pg_lsclusters -h | grep -q "^$version main .* online"; then
    as_root pg_ctlcluster "$version" main start -o "-c listen_addresses=127.0.0.1 -c max_connections=300"
  fi
  for _ in $(seq 1 50); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.1; done
  if ! as_postgres "psql -qtAc \"select 1 from pg_roles where rolname = 'ix'\"" | grep -q 1; then
    as_postgres "psql -qc \"create role ix login createdb password 'ix'\""
  fi
  # Databases the tests create are dropped by them; one left by a killed run is dropped here (no run is going yet).
  for stale in $(as_postgres "psql -qtAc \"select datname from pg_database where datname like 'ix\\_t\\_%'\""); do
    as_postgres "psql -qc 'drop database if exists \"$stale\" with (force)'" >/dev/null
  done
else
  echo "test-services: PostgreSQL is not installed (apt-get install postgresql); its tests will fail" >&2
fi

if command -v redis-server >/dev/null 2>&1; then
  if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    redis-server --bind 127.0.0.1 --port 6379 --daemonize yes --save '' --appendonly no >/dev/null
    for _ in $(seq 1 50); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.1; done
  fi
else
  echo "test-services: Redis is not installed (apt-get install redis-server); its tests will fail" >&2
fi
