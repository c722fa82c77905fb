#!/usr/bin/env bash
# The database's roles, one per job (docs/operating.md, "Database roles"), made or brought up to date by the compose
# files' one-shot `roles` service on every `up`, connected as the bootstrap superuser that the postgres image made
# (POSTGRES_USER). Idempotent, so a volume made before the split is upgraded by the same run that makes a new one:
#   animal_store_owner  owns the database, the schema's objects and what migrations create; `migrate` and `backup`
#   animal_store_api    reads and writes the application's rows, nothing else, under the requests' statement and
#                       idle-in-transaction timeouts; `api` (and the key CLI)
# Each role's password is the secret of the same name in the `secrets` volume: owner-password, api-password.
set -euo pipefail

SECRETS=${SECRETS_DIR:-/run/animal-store}
for name in owner api; do
  [ -s "$SECRETS/$name-password" ] ||
    { echo "roles: no $SECRETS/$name-password: run \`docker compose up\` (its \`secrets\` service writes it)." >&2 && exit 1; }
done
PGPASSWORD=$(cat "$POSTGRES_PASSWORD_FILE")
export PGPASSWORD

# psql variables, so that no password is part of the SQL text a log could show.
psql -XAtq -v ON_ERROR_STOP=1 --single-transaction -f - \
  -v owner_password="$(cat "$SECRETS/owner-password")" -v api_password="$(cat "$SECRETS/api-password")" <<'SQL'
-- Two `up`s at once take turns.
DO $$ BEGIN PERFORM pg_advisory_xact_lock(x'616e0002'::int); END $$;
SELECT format('CREATE ROLE %I', name) FROM (VALUES ('animal_store_owner'), ('animal_store_api')) AS r(name)
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = name) \gexec
ALTER ROLE animal_store_owner LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'owner_password';
ALTER ROLE animal_store_api LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'api_password';
SELECT format('ALTER DATABASE %I OWNER TO animal_store_owner', current_database()) \gexec
-- The schema: the owner creates in it (as the database's owner, through pg_database_owner on PostgreSQL 15 and
-- later); nobody else may.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE, CREATE ON SCHEMA public TO animal_store_owner;
GRANT USAGE ON SCHEMA public TO animal_store_api;
-- A volume from before the split: its objects belong to the superuser; the owner takes them (an identity column's
-- sequence and the indexes follow their table).
SELECT format('ALTER %s public.%I OWNER TO animal_store_owner',
  CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END,
  c.relname)
FROM pg_class c
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
  AND c.relowner <> 'animal_store_owner'::regrole
  AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
    AND d.deptype IN ('i', 'a')) \gexec
-- Rows only: what exists now, and what the owner creates later (migrations, a restore).
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO animal_store_api;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO animal_store_api;
ALTER DEFAULT PRIVILEGES FOR ROLE animal_store_owner IN SCHEMA public
  GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO animal_store_api;
ALTER DEFAULT PRIVILEGES FOR ROLE animal_store_owner IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO animal_store_api;
-- The requests' bounds, in ms, on the service's role only (the owner's migrations and backups run unbounded), as
-- PostgreSQL applies them to each new session behind any pooler: src/database/session-timeouts.ts's SESSION_TIMEOUTS,
-- which a test holds these equal to. Written only when they differ.
SELECT format('ALTER ROLE animal_store_api IN DATABASE %I SET %s = %s', current_database(), name, ms)
FROM (VALUES ('statement_timeout', 5000), ('idle_in_transaction_session_timeout', 10000)) AS t(name, ms)
WHERE NOT EXISTS (SELECT FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
  WHERE s.setrole = 'animal_store_api'::regrole AND d.datname = current_database()
    AND format('%s=%s', name, ms) = ANY (s.setconfig)) \gexec
SQL
echo "roles: animal_store_owner and animal_store_api ready in $PGDATABASE."
