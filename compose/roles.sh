#!/usr/bin/env bash
# The database's roles, one per job (docs/operating.md, "Database roles"), made or brought up to date by the compose
# files' one-shot `roles` service on every `up`, connected as the bootstrap superuser that the postgres image made
# (POSTGRES_USER). Idempotent, so a volume made before the split is upgraded by the same run that makes a new one:
#   animal_store_owner  owns the database, the schema's objects and what migrations create; `migrate` and `backup`
#   animal_store_api    reads and writes the animals' rows; reads `migrations` and `api_keys`, writing only a key's
#                       last_used_at; no large object; under the requests' statement and idle-in-transaction timeouts;
#                       `api` (the key CLI runs as the owner)
#   animal_store_replication  streams the WAL, nothing else; `postgres-replica` (docker-compose.replica.yml), and
#                       only while REPLICATION_PASSWORD_FILE is given: without it the role, if made, cannot log in
# The passwords are read from files (OWNER_PASSWORD_FILE, API_PASSWORD_FILE; default: owner-password and api-password
# in SECRETS_DIR) into psql variables through the environment, never as arguments a process list shows. Compose runs
# it twice on every `up`: as `roles` before the migrations (the owner must exist) and as `grants` after them (the
# api's grants are per table).
set -euo pipefail

SECRETS=${SECRETS_DIR:-/run/animal-store}
OWNER_PASSWORD_FILE=${OWNER_PASSWORD_FILE:-$SECRETS/owner-password}
API_PASSWORD_FILE=${API_PASSWORD_FILE:-$SECRETS/api-password}
for file in "$OWNER_PASSWORD_FILE" "$API_PASSWORD_FILE" "$POSTGRES_PASSWORD_FILE" \
  ${REPLICATION_PASSWORD_FILE:+"$REPLICATION_PASSWORD_FILE"}; do
  [ -s "$file" ] ||
    { echo "roles: no $file: run \`docker compose up\` (its \`secrets\` service writes it)." >&2 && exit 1; }
done
PGPASSWORD=$(<"$POSTGRES_PASSWORD_FILE")
ANIMAL_STORE_OWNER_PASSWORD=$(<"$OWNER_PASSWORD_FILE")
ANIMAL_STORE_API_PASSWORD=$(<"$API_PASSWORD_FILE")
export PGPASSWORD ANIMAL_STORE_OWNER_PASSWORD ANIMAL_STORE_API_PASSWORD
if [ -n "${REPLICATION_PASSWORD_FILE:-}" ]; then
  ANIMAL_STORE_REPLICATION_PASSWORD=$(<"$REPLICATION_PASSWORD_FILE")
  export ANIMAL_STORE_REPLICATION_PASSWORD
fi

psql -XAtq -v ON_ERROR_STOP=1 --single-transaction -f - <<'SQL'
-- psql variables, so that no password is part of the SQL text a log could show.
\getenv owner_password ANIMAL_STORE_OWNER_PASSWORD
\getenv api_password ANIMAL_STORE_API_PASSWORD
\getenv replication_password ANIMAL_STORE_REPLICATION_PASSWORD
-- Two `up`s at once take turns.
DO $$ BEGIN PERFORM pg_advisory_xact_lock(x'616e0002'::int); END $$;
SELECT format('CREATE ROLE %I', name) FROM (VALUES ('animal_store_owner'), ('animal_store_api')) AS r(name)
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = name) \gexec
ALTER ROLE animal_store_owner LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'owner_password';
ALTER ROLE animal_store_api LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'api_password';
-- Physical replication needs no grant: the role reaches no table (compose/pg_hba.conf admits it for replication only).
\if :{?replication_password}
SELECT 'CREATE ROLE animal_store_replication'
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'animal_store_replication') \gexec
ALTER ROLE animal_store_replication LOGIN REPLICATION NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS PASSWORD :'replication_password';
\else
SELECT 'ALTER ROLE animal_store_replication NOLOGIN PASSWORD NULL'
WHERE EXISTS (SELECT FROM pg_roles WHERE rolname = 'animal_store_replication') \gexec
\endif
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
-- Rows only: what exists now, and what the owner creates later (migrations, a restore: the next `up` narrows them).
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO animal_store_api;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO animal_store_api;
ALTER DEFAULT PRIVILEGES FOR ROLE animal_store_owner IN SCHEMA public
  GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO animal_store_api;
ALTER DEFAULT PRIVILEGES FOR ROLE animal_store_owner IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO animal_store_api;
-- Narrower where the service needs less: it reads the applied migrations (readiness) and reads the keys, writing
-- only when each was last used; the key commands and the migrations run as the owner.
SELECT format('REVOKE ALL ON public.%I FROM animal_store_api', t) || ';' ||
  format('GRANT SELECT ON public.%I TO animal_store_api', t) ||
  CASE t WHEN 'api_keys' THEN format(';GRANT UPDATE (last_used_at) ON public.%I TO animal_store_api', t) ELSE '' END
FROM unnest(ARRAY['migrations', 'api_keys']) AS t WHERE to_regclass(format('public.%I', t)) IS NOT NULL \gexec
-- Large objects: the schema has none, and one the service created would make every pg_dump as the owner fail.
-- PUBLIC may not create them (a superuser still may).
REVOKE EXECUTE ON FUNCTION lo_create(oid), lo_creat(integer), lo_import(text), lo_import(text, oid),
  lo_from_bytea(oid, bytea) FROM PUBLIC;
-- The requests' bounds, in ms, on the service's role only (the owner's migrations and backups run unbounded), as
-- PostgreSQL applies them to each new session behind any pooler: src/database/session-timeouts.ts's SESSION_TIMEOUTS,
-- which a test holds these equal to. The role may change its own defaults (ALTER ROLE of oneself): whatever else it
-- holds is removed here, on every run; the bounds are written only when they differ.
CREATE TEMPORARY TABLE api_timeouts (name, ms) ON COMMIT DROP AS
VALUES ('statement_timeout', 5000), ('idle_in_transaction_session_timeout', 10000);
SELECT format('ALTER ROLE animal_store_api IN DATABASE %I RESET ALL', current_database())
FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
WHERE s.setrole = 'animal_store_api'::regrole AND d.datname = current_database()
  AND NOT s.setconfig <@ ARRAY(SELECT format('%s=%s', name, ms) FROM api_timeouts) \gexec
SELECT 'ALTER ROLE animal_store_api RESET ALL' FROM pg_db_role_setting
WHERE setrole = 'animal_store_api'::regrole AND setdatabase = 0 \gexec
SELECT format('ALTER ROLE animal_store_api IN DATABASE %I SET %s = %s', current_database(), name, ms)
FROM api_timeouts
WHERE NOT EXISTS (SELECT FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
  WHERE s.setrole = 'animal_store_api'::regrole AND d.datname = current_database()
    AND format('%s=%s', name, ms) = ANY (s.setconfig)) \gexec
-- The release before the roles bounded the superuser itself (connected as it): these bounds are the api's alone.
SELECT format('ALTER ROLE %I IN DATABASE %I RESET %s', current_user, d.datname, t.name)
FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase,
  api_timeouts t
WHERE s.setrole = current_user::regrole AND d.datname = current_database()
  AND EXISTS (SELECT FROM unnest(s.setconfig) c WHERE c LIKE t.name || '=%') \gexec
SQL
echo "roles: animal_store_owner and animal_store_api ready in $PGDATABASE."
