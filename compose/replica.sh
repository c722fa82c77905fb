#!/usr/bin/env bash
# `postgres-replica`'s entry point (docker-compose.replica.yml), on the PostgreSQL image, as root: on its first start
# a copy of `db` taken with pg_basebackup, then, on every start, a hot standby streaming from `db`, both as the role
# animal_store_replication (compose/roles.sh). Its password goes from REPLICATION_PASSWORD_FILE (root's) into a
# password file only the postgres user reads, never into an argument or a setting, so a rotated one is used from the
# next start. Its arguments are the server's command line (`postgres …`), to which the standby's settings are added.
set -euo pipefail

[ -s "$REPLICATION_PASSWORD_FILE" ] || {
  echo "postgres-replica: no $REPLICATION_PASSWORD_FILE: run \`docker compose up\` with docker-compose.replica.yml" \
    "(its \`secrets\` service writes it)." >&2
  exit 1
}
passfile=/var/run/postgresql/replication.pgpass
(umask 077 && printf '*:*:*:*:%s\n' "$(<"$REPLICATION_PASSWORD_FILE")" >"$passfile")
chown postgres:postgres "$passfile"
primary="host=db port=5432 user=animal_store_replication passfile=$passfile application_name=postgres-replica"
# The official image steps down with gosu; Debian's own PostgreSQL (the test stand-in) with util-linux's setpriv.
if command -v gosu >/dev/null; then as_postgres=(gosu postgres); else
  as_postgres=(setpriv --reuid=postgres --regid=postgres --init-groups)
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  # Into a directory of its own, moved into place once complete: a copy cut short is taken again at the next start.
  mkdir -p "$(dirname "$PGDATA")" && chown postgres:postgres "$(dirname "$PGDATA")"
  rm -rf "$PGDATA" "$PGDATA.clone"
  "${as_postgres[@]}" pg_basebackup -D "$PGDATA.clone" -d "$primary" --wal-method=stream --checkpoint=fast
  "${as_postgres[@]}" touch "$PGDATA.clone/standby.signal"
  mv "$PGDATA.clone" "$PGDATA"
  echo "postgres-replica: cloned db into $PGDATA" >&2
fi
exec "${as_postgres[@]}" "$@" -D "$PGDATA" -c "primary_conninfo=$primary"
