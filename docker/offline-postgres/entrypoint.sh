#!/bin/sh
# First start: a cluster whose POSTGRES_USER signs in with POSTGRES_PASSWORD from other hosts, and
# the database POSTGRES_DB. Then PostgreSQL itself, on every address.
set -eu
data=/var/lib/postgresql/data
if [ ! -s "$data/PG_VERSION" ]; then
  password=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$password"
  initdb --pgdata="$data" --username="$POSTGRES_USER" --pwfile="$password" \
    --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --no-locale >/dev/null
  rm -f "$password"
  echo "host all all all scram-sha-256" >>"$data/pg_hba.conf"
  if [ "${POSTGRES_DB:-$POSTGRES_USER}" != postgres ]; then
    echo "CREATE DATABASE \"${POSTGRES_DB:-$POSTGRES_USER}\"" | postgres --single -D "$data" postgres >/dev/null
  fi
fi
exec postgres -D "$data" -c listen_addresses='*' -c unix_socket_directories=/tmp
