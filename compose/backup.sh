#!/usr/bin/env bash
# Logical backups of the animal store's database: pg_dump in its custom format, one file per backup, the newest
# BACKUP_KEEP kept and the newest of each of the last BACKUP_KEEP_WEEKLY weeks and BACKUP_KEEP_MONTHLY months. The compose files' `backup` service runs it on the same PostgreSQL image as `db` (so pg_dump and
# pg_restore are the server's own version), and k8s/backup-cronjob.yaml ships the same file. docs/operating.md,
# "Backups and restore".
#
#   backup                 schedule: a backup at start, unless the newest is younger than BACKUP_INTERVAL (a restart
#                          never pushes good backups out), then one every BACKUP_INTERVAL; a failed one is tried
#                          again after a minute
#   backup now             one backup at once; prints its file name on stdout
#   backup list            the backups, newest first, with size and time
#   backup restore <file> [--force]
#                          replaces the database's tables with the backup's, all or nothing, except the API keys:
#                          those stay as they are now, merged with the backup's by digest; identity sequences that
#                          are ahead stay ahead. Refused, the database untouched, for a later release's backup
#                          (unless --force), and for another release's while other sessions are connected
#   backup health          exit 0 while the last run succeeded, the newest backup is younger than twice
#                          BACKUP_INTERVAL and retention holds nothing back (the compose healthcheck)
#   backup accept-shrink   after a purge that was meant: the backups the drop guard holds back are pruned as any
#                          other, and the newest backup is the guard's new baseline
#
# Settings: BACKUP_INTERVAL (default 24h: a whole number above 0 followed by s, m, h or d, at most 3650d: the rule of
# the key CLI's durations in src/cli/apikey-commands.ts), BACKUP_KEEP (default 7), BACKUP_KEEP_WEEKLY (default 4),
# BACKUP_KEEP_MONTHLY (default 12),
# BACKUP_TARGET (the directory, /backups), BACKUP_METRICS (the Prometheus textfile, default
# $BACKUP_TARGET/metrics/animal-store-backup.prom; empty: none).
# The database: DATABASE_URL, else libpq's PGHOST, PGUSER, PGDATABASE; the password from PGPASSWORD or the file
# POSTGRES_PASSWORD_FILE names. One JSON line on stderr per backup (or failure); stdout carries only what a command
# prints.
set -uo pipefail

PREFIX=animal-store-
SUFFIX=.dump
DEFAULT_INTERVAL=24h
DEFAULT_KEEP=7
DEFAULT_KEEP_WEEKLY=4
DEFAULT_KEEP_MONTHLY=12
# Only files named so are listed, pruned or counted as the newest: never a hand-named copy, never anything else.
NAME_PATTERN='^animal-store-[0-9]{8}T[0-9]{6}\.[0-9]{3}Z\.dump$'
# Set in the container by a failed run, removed by a successful one: what `backup health` reads.
FAILED_MARK=/tmp/animal-store-backup.failed
# In the backup directory, shared by every run: the backups retention holds back (read by health and the metric), and
# the time of the last `accept-shrink`.
HELD=.retention-held
ACCEPTED=.shrink-accepted
MAX_DURATION_SECONDS=$((3650 * 86400))
USAGE='Usage: backup [now | list | restore <file> [--force] | health | accept-shrink]   (no command: a backup every BACKUP_INTERVAL)'

# `90d`, `12h`, `30m`, `10s` in seconds on stdout, or the one-line problem on stderr and status 1.
duration_seconds() { # name text
  local text=$2 seconds=''
  if [[ $text =~ ^([1-9][0-9]{0,5})([smhd])$ ]]; then
    case ${BASH_REMATCH[2]} in
      s) seconds=${BASH_REMATCH[1]} ;;
      m) seconds=$((BASH_REMATCH[1] * 60)) ;;
      h) seconds=$((BASH_REMATCH[1] * 3600)) ;;
      d) seconds=$((BASH_REMATCH[1] * 86400)) ;;
    esac
  fi
  if [ -z "$seconds" ] || [ "$seconds" -gt "$MAX_DURATION_SECONDS" ]; then
    echo "Invalid duration \"$text\" for $1: use a whole number above 0 followed by s, m, h or d (e.g. 90d, 12h, 10s), at most 3650d." >&2
    return 1
  fi
  echo "$seconds"
}

keep_count() { # name text [lowest]
  local lowest=${3:-1}
  if [[ ! $2 =~ ^(0|[1-9][0-9]{0,3})$ ]] || [ "$2" -lt "$lowest" ]; then
    echo "Invalid $1 \"$2\": use a whole number of backups to keep, from $lowest to 9999." >&2
    return 1
  fi
  echo "$2"
}

now_ms() { date +%s%3N; }
# Now, in seconds: what the service's files are dated against (one place, so that a test can move the clock).
now_s() { date +%s; }

json_string() { # text: a JSON string (names and messages here hold no control characters but newlines)
  local text=${1//\\/\\\\}
  text=${text//\"/\\\"}
  printf '"%s"' "${text//$'\n'/ }"
}

# One JSON line on stderr, as the service writes its own: level (30 info, 50 error), time in ms, msg, then fields
# given as name=value pairs (numbers stay numbers).
log() { # level msg [name=value...]
  local level=$1 msg=$2 line
  shift 2
  line="{\"level\":$level,\"time\":$(now_ms),\"context\":\"Backup\",\"msg\":$(json_string "$msg")"
  local pair name value
  for pair in "$@"; do
    name=${pair%%=*}
    value=${pair#*=}
    if [[ $value =~ ^(0|[1-9][0-9]*)$ ]]; then line+=",\"$name\":$value"; else line+=",\"$name\":$(json_string "$value")"; fi
  done
  echo "$line}" >&2
}

# The one-line error a person reads, then the exit status.
fail() { # status message
  echo "backup: $2" >&2
  exit "$1"
}

connect() {
  if [ -z "${PGPASSWORD:-}" ] && [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then
    PGPASSWORD=$(cat "$POSTGRES_PASSWORD_FILE") || fail 1 "cannot read the database password from $POSTGRES_PASSWORD_FILE."
    export PGPASSWORD
  fi
  # pg_restore connects only with --dbname; a URL is a connection string there, for pg_dump and psql too.
  [ -n "${DATABASE_URL:-}${PGDATABASE:-}" ] || fail 1 'no database to connect to: set DATABASE_URL (or PGHOST, PGUSER, PGDATABASE).'
  DB=(--dbname="${DATABASE_URL:-$PGDATABASE}")
}


# The service's own file names, newest first (names sort by their UTC time): those dated up to now, or with `future`,
# those whose name or modification time is ahead of now (a host clock that once ran ahead wrote them). Those count as
# no backup: not the newest, not fresh, no retention slot; nothing removes them.
backups_newest_first() { # [future]
  local file name now stamp
  local -A ahead=()
  now=$(now_s)
  # Without a process per file: names compare as text with now's UTC stamp; one find lists modification times past
  # now's second.
  TZ=UTC printf -v stamp '%(%Y%m%dT%H%M%S)T' "$now"
  while IFS= read -r file; do
    ahead[${file##*/}]=1
  done < <(find "$TARGET" -maxdepth 1 -type f -name "$PREFIX*$SUFFIX" -newermt "@$((now + 1))" 2>/dev/null)
  for file in "$TARGET/$PREFIX"*"$SUFFIX"; do
    name=${file##*/}
    [ -f "$file" ] && [[ $name =~ $NAME_PATTERN ]] || continue
    [[ ${name:${#PREFIX}:15} > $stamp ]] && ahead[$name]=1
    if [ "${1:-}" = future ]; then [ -z "${ahead[$name]:-}" ] || echo "$name"; else [ -n "${ahead[$name]:-}" ] || echo "$name"; fi
  done | sort -r
}

FUTURE_ADVICE='the host clock was ahead when they were written: they count as no backup and hold no retention slot; check the clock (timedatectl), then move them out of the backup directory'

# One error line per run while files dated in the future are there.
report_future() {
  local future
  future=$(backups_newest_first future | paste -sd ' ')
  [ -z "$future" ] || log 50 "backups dated in the future ignored: $FUTURE_ADVICE" files="$future"
}

# Reads a backup whole (its table of contents and every table's data, which `pg_restore --list` alone does not
# read) and sets CHECK_PETS and CHECK_API_KEYS to the rows it holds, CHECK_MIGRATIONS to its applied migrations' names
# (one a line). Status 1 for a truncated or foreign file, with the reason in CHECK_PROBLEM.
CHECK_PROBLEM=''
CHECK_PETS=''
CHECK_API_KEYS=''
CHECK_MIGRATIONS=''
check_backup() { # path
  local toc counts status errors
  CHECK_PROBLEM=''
  if ! toc=$(pg_restore --list "$1" 2>&1); then
    CHECK_PROBLEM=$(echo "$toc" | head -n 1)
    return 1
  fi
  if [ "$(grep -Ec ' TABLE public (pets|api_keys|migrations) ' <<<"$toc")" -ne 3 ]; then
    CHECK_PROBLEM='it holds no pets, api_keys and migrations tables: not a backup of the animal store'
    return 1
  fi
  # Each row of a COPY block is one line (COPY's text format escapes newlines).
  errors=$(mktemp) || return 1
  counts=$(pg_restore --file=- "$1" 2>"$errors" | awk -F '\t' '
    /^COPY public\.pets / { table = "pets"; next }
    /^COPY public\.api_keys / { table = "api_keys"; next }
    /^COPY public\.migrations / { table = "migrations"; next }
    /^\\\.$/ { table = ""; next }
    table == "migrations" { names = names "\n" $3; next }
    table != "" { rows[table]++ }
    END { printf "%d %d%s\n", rows["pets"], rows["api_keys"], names }')
  status=${PIPESTATUS[0]}
  if [ "$status" -ne 0 ]; then
    CHECK_PROBLEM=$(head -n 1 "$errors")
    rm -f "$errors"
    return 1
  fi
  rm -f "$errors"
  read -r CHECK_PETS CHECK_API_KEYS <<<"${counts%%$'\n'*}"
  CHECK_MIGRATIONS=$(tail -n +2 <<<"$counts")
}

# The backup directory's owner gets the files (so an operator who created it reads them without root).
give_to_directory_owner() { # path
  if [ "$(id -u)" -eq 0 ]; then chown --reference="$TARGET" "$1" 2>/dev/null || true; fi
}

# The Prometheus textfile (node_exporter's textfile collector reads it; docs/operating.md, "Backups and restore"):
# the newest backup's time (0 while there is none) and the failed runs, counted on from the file's own value.
write_metrics() { # failures to add
  [ -n "$METRICS" ] || return 0
  local newest last=0 failures=0 future held directory=${METRICS%/*}
  newest=$(backups_newest_first | head -n 1)
  [ -z "$newest" ] || last=$(stat -c %Y "$TARGET/$newest")
  if [ -f "$METRICS" ]; then
    failures=$(awk '$1 == "animal_store_backup_failures_total" { print $2 }' "$METRICS")
  fi
  failures=$((${failures:-0} + $1))
  future=$(backups_newest_first future | grep -c .)
  held=0
  [ ! -f "$TARGET/$HELD" ] || held=$(grep -c . "$TARGET/$HELD")
  mkdir -p "$directory" && chmod 755 "$directory" && give_to_directory_owner "$directory" || return 0
  cat >"$METRICS.tmp" <<METRICS || return 0
# HELP animal_store_backup_last_success_timestamp_seconds Unix time of the newest successful backup (0: none yet).
# TYPE animal_store_backup_last_success_timestamp_seconds gauge
animal_store_backup_last_success_timestamp_seconds $last
# HELP animal_store_backup_failures_total Backup runs that failed (pg_dump, or the file not reading back whole).
# TYPE animal_store_backup_failures_total counter
animal_store_backup_failures_total $failures
# HELP animal_store_backup_future_files Backup files dated ahead of now, ignored (not fresh, no retention slot).
# TYPE animal_store_backup_future_files gauge
animal_store_backup_future_files $future
# HELP animal_store_backup_retention_held Backups retention keeps past their time: each holds more than twice the rows of the newest (\`backup accept-shrink\` once a purge was meant).
# TYPE animal_store_backup_retention_held gauge
animal_store_backup_retention_held $held
METRICS
  chmod 644 "$METRICS.tmp" && give_to_directory_owner "$METRICS.tmp" && mv "$METRICS.tmp" "$METRICS"
}

backup_failed() { # message error
  log 50 "$1" file="$NAME" error="$2"
  touch "$FAILED_MARK" 2>/dev/null
  write_metrics 1
  return 1
}

# Status 0 when the backup (counts from its read-back) holds fewer than half the animals or the keys of the other.
far_fewer_rows() { # pets keys other_pets other_keys
  [ $(($1 * 2)) -lt "$3" ] || [ $(($2 * 2)) -lt "$4" ]
}

# Keeps the newest BACKUP_KEEP files; the newest file of each of the last BACKUP_KEEP_WEEKLY ISO weeks and of each of
# the last BACKUP_KEEP_MONTHLY calendar months (UTC) before the current one (the week or month under way is not a whole
# one: its backups are the newest, which BACKUP_KEEP holds); and always the file just written. Removes the other files
# of the service's own name pattern, never anything else. The drop guard: a run whose backup holds far fewer rows than
# the newest kept one prunes nothing, and no run removes a file holding more than twice the rows of the one it just
# wrote (an emptied table or volume must not push the good copies out), unless that file is older than the last
# `accept-shrink`. What it holds back is listed in the directory's HELD file (health and the metric read it), one
# line per run.
prune() { # written pets keys
  local written=$1 pets=$2 keys=$3 file week month generation position previous='' accepted=''
  local now current_week current_month
  local -A weeks=() months=()
  local files=() periods=() candidates=() held=()
  now=$(now_s)
  TZ=UTC printf -v current_week '%(%G-W%V)T' "$now"
  TZ=UTC printf -v current_month '%(%Y-%m)T' "$now"
  [ ! -s "$TARGET/$ACCEPTED" ] || TZ=UTC printf -v accepted '%(%Y%m%dT%H%M%S)T' "$(<"$TARGET/$ACCEPTED")"
  mapfile -t files < <(backups_newest_first)
  # Each file's ISO week and month (UTC), in one run of date.
  mapfile -t periods < <(for file in "${files[@]}"; do echo "${file:${#PREFIX}:8}"; done | date -u -f - '+%G-W%V %Y-%m')
  for position in "${!files[@]}"; do
    file=${files[$position]}
    read -r week month <<<"${periods[$position]}"
    generation=0
    if [ "$week" != "$current_week" ] && [ -z "${weeks[$week]:-}" ]; then
      weeks[$week]=1
      [ "${#weeks[@]}" -gt "$KEEP_WEEKLY" ] || generation=1
    fi
    if [ "$month" != "$current_month" ] && [ -z "${months[$month]:-}" ]; then
      months[$month]=1
      [ "${#months[@]}" -gt "$KEEP_MONTHLY" ] || generation=1
    fi
    [ "$file" != "$written" ] || continue
    [ -n "$previous" ] || previous=$file
    [ "$position" -lt "$KEEP" ] || [ "$generation" -eq 1 ] || candidates+=("$file")
  done
  if [ -n "$previous" ] && [[ ${previous:${#PREFIX}:15} > $accepted ]] && check_backup "$TARGET/$previous" &&
    far_fewer_rows "$pets" "$keys" "$CHECK_PETS" "$CHECK_API_KEYS"; then
    log 50 'backup holds far fewer rows than the newest kept one: nothing pruned this run; check the database (a mass delete, an emptied volume?) and restore the older backup if the rows were lost, or run `backup accept-shrink` if the purge was meant' \
      file="$written" pets="$pets" apiKeys="$keys" newestKept="$previous" newestKeptPets="$CHECK_PETS" \
      newestKeptApiKeys="$CHECK_API_KEYS"
    held=("${candidates[@]}")
  else
    for file in "${candidates[@]}"; do
      if [[ ${file:${#PREFIX}:15} > $accepted ]] && check_backup "$TARGET/$file" &&
        far_fewer_rows "$pets" "$keys" "$CHECK_PETS" "$CHECK_API_KEYS"; then
        held+=("$file")
        continue
      fi
      rm -f "$TARGET/$file" && log 30 'backup removed: past BACKUP_KEEP, BACKUP_KEEP_WEEKLY and BACKUP_KEEP_MONTHLY' \
        file="$file" keep="$KEEP" keepWeekly="$KEEP_WEEKLY" keepMonthly="$KEEP_MONTHLY"
    done
    [ "${#held[@]}" -eq 0 ] ||
      log 50 'backups kept past retention: each holds more than twice the rows of the newest; check the database (a mass delete?), and once the data is as meant run `backup accept-shrink`' \
        files="${held[*]}" newest="$written" pets="$pets" apiKeys="$keys"
  fi
  if [ "${#held[@]}" -eq 0 ]; then
    rm -f "$TARGET/$HELD"
  else
    printf '%s\n' "${held[@]}" >"$TARGET/$HELD"
  fi
}

# After a purge the operator meant: every backup taken until now may be pruned as any other (the newest becomes the
# drop guard's baseline), and retention runs at once.
accept_shrink() {
  local newest pets keys
  newest=$(backups_newest_first | head -n 1)
  [ -n "$newest" ] || fail 1 "no backup in $TARGET yet: nothing to accept."
  check_backup "$TARGET/$newest" ||
    fail 1 "the newest backup, $newest, does not read back whole ($CHECK_PROBLEM): take a good one first (\`backup now\`)."
  pets=$CHECK_PETS
  keys=$CHECK_API_KEYS
  now_s >"$TARGET/$ACCEPTED"
  prune "$newest" "$pets" "$keys"
  write_metrics 0
  echo "Accepted: $newest ($pets animals, $keys API keys) is the baseline; the backups taken before now are kept or removed by BACKUP_KEEP, BACKUP_KEEP_WEEKLY and BACKUP_KEEP_MONTHLY alone. $(backups_newest_first | grep -c .) backups kept."
}

PARTIAL=''
NAME=''
DUMP_PID=''
# Set while a finished backup is renamed and the old ones pruned: a stop then waits for the end of it.
FINISHING=0
STOP_REQUESTED=0
# One backup: dumped under a temporary name, read back whole, then renamed; a failed one is logged and removed.
# Prints the file name on stdout. pg_dump runs in the background so that a stop reaches on_stop at once (bash runs a
# trap only between commands, and a dump blocked on a lock can last).
take_backup() {
  local started errors status pets keys
  started=$(now_ms)
  NAME="$PREFIX$(date -u +%Y%m%dT%H%M%S.%3NZ)$SUFFIX"
  PARTIAL="$TARGET/.$NAME.partial"
  umask 077
  errors=$(mktemp) || return 1
  pg_dump "${DB[@]}" --format=custom -B --file="$PARTIAL" 2>"$errors" &
  DUMP_PID=$!
  wait "$DUMP_PID"
  status=$?
  DUMP_PID=''
  if [ "$status" -ne 0 ]; then
    rm -f "$PARTIAL"
    PARTIAL=''
    backup_failed 'backup failed: pg_dump' "$(head -n 1 "$errors")"
    rm -f "$errors"
    return 1
  fi
  rm -f "$errors"
  if ! check_backup "$PARTIAL"; then
    rm -f "$PARTIAL"
    PARTIAL=''
    backup_failed 'backup failed: the file written does not read back whole' "$CHECK_PROBLEM"
    return 1
  fi
  pets=$CHECK_PETS
  keys=$CHECK_API_KEYS
  FINISHING=1
  chmod 600 "$PARTIAL"
  give_to_directory_owner "$PARTIAL"
  mv "$PARTIAL" "$TARGET/$NAME"
  PARTIAL=''
  rm -f "$FAILED_MARK"
  log 30 'backup written' file="$NAME" bytes="$(stat -c %s "$TARGET/$NAME")" \
    durationMs="$(($(now_ms) - started))" pets="$pets" apiKeys="$keys"
  report_future
  prune "$NAME" "$pets" "$keys"
  write_metrics 0
  FINISHING=0
  echo "$NAME"
  if [ "$STOP_REQUESTED" -eq 1 ]; then exit 0; fi
}

on_stop() {
  if [ "$FINISHING" -eq 1 ]; then
    STOP_REQUESTED=1
    return
  fi
  if [ -n "$DUMP_PID" ]; then
    kill "$DUMP_PID" 2>/dev/null
    wait "$DUMP_PID" 2>/dev/null
  fi
  if [ -n "$PARTIAL" ]; then rm -f "$PARTIAL"; fi
  exit 0
}

list() {
  local file count=0
  while read -r file; do
    [ -n "$file" ] || continue
    count=$((count + 1))
    printf '%s  %10s bytes  %s\n' "$file" "$(stat -c %s "$TARGET/$file")" \
      "$(date -u -d "@$(stat -c %Y "$TARGET/$file")" +%Y-%m-%dT%H:%M:%SZ)"
  done < <(backups_newest_first)
  [ "$count" -gt 0 ] || echo "No backups in $TARGET yet." >&2
}

# Run in restore's transaction before the archive: the live keys' refusals and the live sequences, kept in temporary
# tables; then every table, view, sequence, routine and type of the schema dropped with CASCADE, so that an object a
# later release added (a foreign key to a restored table, say) cannot block the archive.
RESTORE_BEFORE=$(
  cat <<'SQL'
DO $$
DECLARE
  r record;
BEGIN
  -- Keys are credentials, not data: the live table, whole, is what the restore keeps (RESTORE_AFTER merges it).
  CREATE TEMP TABLE restore_live_keys (digest text, row jsonb) ON COMMIT DROP;
  CREATE TEMP TABLE restore_live_columns (name text) ON COMMIT DROP;
  IF to_regclass('public.api_keys') IS NOT NULL THEN
    INSERT INTO restore_live_keys SELECT k.digest, to_jsonb(k) FROM public.api_keys k;
    INSERT INTO restore_live_columns SELECT attname FROM pg_attribute
      WHERE attrelid = 'public.api_keys'::regclass AND attnum > 0 AND NOT attisdropped;
  END IF;
  CREATE TEMP TABLE restore_live_sequences ON COMMIT DROP AS
    SELECT sequencename AS name, last_value FROM pg_sequences WHERE schemaname = 'public';
  CREATE TEMP TABLE restore_report (position int GENERATED ALWAYS AS IDENTITY, line text) ON COMMIT DROP;
  CREATE FUNCTION pg_temp.restore_time(t text) RETURNS text LANGUAGE sql IMMUTABLE AS $f$
    SELECT to_char(t::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
  $f$;
  -- A key's state as the restore's report names it: what lets it in, or keeps it out.
  CREATE FUNCTION pg_temp.restore_key_state(k jsonb) RETURNS text LANGUAGE sql IMMUTABLE AS $f$
    SELECT concat_ws(', ',
      'revoked ' || pg_temp.restore_time(k ->> 'revoked_at'),
      CASE WHEN k ? 'expires_at' THEN coalesce('expires ' || pg_temp.restore_time(k ->> 'expires_at'), 'never expires') END,
      'replaced by key ' || (k ->> 'replaced_by'),
      CASE WHEN k ? 'scopes' THEN 'scopes ' || coalesce(k ->> 'scopes', 'all') END)
  $f$;
  FOR r IN
    SELECT c.relname, CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'S' THEN 'SEQUENCE'
      WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END AS kind
    FROM pg_class c
    WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
      AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
        AND d.deptype IN ('e', 'i', 'a'))
  LOOP
    EXECUTE format('DROP %s IF EXISTS public.%I CASCADE', r.kind, r.relname);
  END LOOP;
  FOR r IN
    SELECT p.oid::regprocedure::text AS name FROM pg_proc p
    WHERE p.pronamespace = 'public'::regnamespace
      AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
  LOOP
    EXECUTE format('DROP ROUTINE IF EXISTS %s CASCADE', r.name);
  END LOOP;
  FOR r IN
    SELECT t.typname FROM pg_type t
    WHERE t.typnamespace = 'public'::regnamespace AND t.typtype IN ('e', 'd', 'r')
      AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_type'::regclass AND d.objid = t.oid AND d.deptype = 'e')
  LOOP
    EXECUTE format('DROP TYPE IF EXISTS public.%I CASCADE', r.typname);
  END LOOP;
END
$$;
SQL
)

# Run in the same transaction after the archive (whose search_path is empty: every name is qualified): a key that the
# live database refuses (revoked, or expiring earlier) stays refused, matched by digest, and every identity sequence
# continues after the larger of its live and restored values. Reports one line for each.
RESTORE_AFTER=$(
  cat <<'SQL'
DO $$
DECLARE
  r record;
  columns text;
  lost text;
  seq text := pg_get_serial_sequence('public.api_keys', 'id');
BEGIN
  FOR r IN
    SELECT s.sequencename AS name, s.last_value AS restored, l.last_value AS live
    FROM pg_sequences s JOIN pg_temp.restore_live_sequences l ON l.name = s.sequencename
    WHERE s.schemaname = 'public' AND l.last_value > coalesce(s.last_value, 0)
  LOOP
    PERFORM setval(format('public.%I', r.name), r.live);
    INSERT INTO pg_temp.restore_report (line)
    VALUES (format('ids not reused: %s continues after %s, the live database''s last (the backup''s: %s)', r.name,
      r.live, coalesce(r.restored::text, 'none')));
  END LOOP;
  IF NOT EXISTS (SELECT FROM pg_temp.restore_live_columns) THEN
    INSERT INTO pg_temp.restore_report (line)
    SELECT format('keys: the database had no api_keys table, so the backup''s %s keys are what there is: keys issued, rotated or revoked after this backup are not known here; revoke or reissue them with npm run apikey', count(*))
    FROM public.api_keys;
    RETURN;
  END IF;
  CREATE TEMP TABLE restore_backup_keys ON COMMIT DROP AS SELECT k.digest, to_jsonb(k) AS row FROM public.api_keys k;
  -- Key by key where the backup and the live table differ: what the restore kept, and what it brought back.
  INSERT INTO pg_temp.restore_report (line)
  SELECT CASE
      WHEN b.digest IS NULL THEN format('key kept: %s "%s", issued after this backup (%s)', l.row ->> 'id', l.row ->> 'name', pg_temp.restore_key_state(l.row))
      WHEN l.digest IS NULL THEN format('key brought back: %s "%s", in the backup but gone from the live database (%s)%s', b.row ->> 'id', b.row ->> 'name', pg_temp.restore_key_state(b.row),
        CASE WHEN b.row -> 'id' IN (SELECT row -> 'id' FROM pg_temp.restore_live_keys) THEN ': a live key holds its id, so it gets a new one (npm run apikey -- list)' END)
      ELSE format('key kept as it is now: %s "%s" (%s; the backup had %s)', l.row ->> 'id', l.row ->> 'name', pg_temp.restore_key_state(l.row), pg_temp.restore_key_state(b.row))
    END
  FROM pg_temp.restore_live_keys l FULL JOIN pg_temp.restore_backup_keys b ON b.digest = l.digest
  WHERE b.digest IS NULL OR l.digest IS NULL OR pg_temp.restore_key_state(l.row) <> pg_temp.restore_key_state(b.row)
  ORDER BY (coalesce(l.row, b.row) ->> 'id')::bigint;
  SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO columns FROM pg_attribute
  WHERE attrelid = 'public.api_keys'::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = ''
    AND attname IN (SELECT name FROM pg_temp.restore_live_columns);
  SELECT string_agg(name, ', ' ORDER BY name) INTO lost FROM pg_temp.restore_live_columns
  WHERE name NOT IN (SELECT attname FROM pg_attribute WHERE attrelid = 'public.api_keys'::regclass AND NOT attisdropped);
  IF lost IS NOT NULL THEN
    INSERT INTO pg_temp.restore_report (line)
    VALUES (format('keys: the backup''s release has no api_keys column %s: the live values there are lost, and migrate adds the column empty', lost));
  END IF;
  -- One statement, so that replaced_by may point either way between live and restored keys. A key the live database
  -- lost keeps its id unless a live key has taken it.
  DELETE FROM public.api_keys;
  EXECUTE format('INSERT INTO public.api_keys (%1$s) OVERRIDING SYSTEM VALUE SELECT %1$s FROM ('
    || 'SELECT r.* FROM pg_temp.restore_live_keys l, jsonb_populate_record(NULL::public.api_keys, l.row) r '
    || 'UNION ALL SELECT r.* FROM pg_temp.restore_backup_keys b, jsonb_populate_record(NULL::public.api_keys, '
    || 'CASE WHEN b.row -> ''id'' IN (SELECT row -> ''id'' FROM pg_temp.restore_live_keys) '
    || 'THEN b.row || jsonb_build_object(''id'', nextval(%2$L)) ELSE b.row END) r '
    || 'WHERE b.digest NOT IN (SELECT digest FROM pg_temp.restore_live_keys)) merged', columns, seq);
  IF lost LIKE '%expires_at%' THEN
    -- A backup from before expiries: a key expired in the live database is revoked instead.
    WITH kept AS (
      UPDATE public.api_keys k SET revoked_at = (l.row ->> 'expires_at')::timestamptz
      FROM pg_temp.restore_live_keys l
      WHERE k.digest = l.digest AND (l.row ->> 'expires_at')::timestamptz <= now() AND k.revoked_at IS NULL
      RETURNING k.id, k.name
    )
    INSERT INTO pg_temp.restore_report (line)
    SELECT format('key refused: %s "%s" expired in the live database: revoked, since the backup has no expiries', id, name)
    FROM kept;
  END IF;
  INSERT INTO pg_temp.restore_report (line)
  SELECT format('keys: left as they are now, merged with the backup''s by digest: %s keys', count(*)) FROM public.api_keys;
END
$$;
-- Marked, apart from the archive's own SELECTs (its sequences' setval).
SELECT 'report: ' || line FROM pg_temp.restore_report ORDER BY position;
SQL
)

# The live database's applied migrations (one name a line), or nothing when it has none.
live_migrations() {
  if [ "$(psql "${DB[@]}" -XAtq -v ON_ERROR_STOP=1 -c "SELECT to_regclass('public.migrations') IS NOT NULL")" = t ]; then
    psql "${DB[@]}" -XAtq -v ON_ERROR_STOP=1 -c 'SELECT name FROM public.migrations ORDER BY id'
  fi
}

# What the backup's migrations are against the ones this database had, and the drill's next step.
migrations_verdict() { # live backup
  local older newer next='Next: `docker compose run --rm migrate` (on Kubernetes, the migrate Job), then start the API (`docker compose up -d`).'
  if [ -z "$1" ]; then
    echo "This database had no migrations applied, so the release to compare with is unknown. $next"
    return
  fi
  older=$(comm -23 <(sort <<<"$1") <(sort <<<"$2") | paste -sd ' ')
  newer=$(comm -13 <(sort <<<"$1") <(sort <<<"$2") | paste -sd ' ')
  if [ -n "$newer" ]; then
    echo "The backup was taken by a later release than this database's (it holds $newer): run that release's image or a later one, then migrate and start the API."
  elif [ -n "$older" ]; then
    echo "The backup is older than this database's release: it lacks $older. $next"
  else
    echo "The backup's migrations are this database's. $next"
  fi
}

# Other sessions on the database (the API's, a psql), by user. A role without pg_read_all_stats (the owner) sees
# other users' sessions without their backend_type: a user's name is what tells a session from a server process.
other_sessions() {
  psql "${DB[@]}" -XAtq -v ON_ERROR_STOP=1 -c "SELECT string_agg(usename || ' (' || n || ')', ', ') FROM (
    SELECT usename, count(*) AS n FROM pg_stat_activity WHERE datname = current_database()
      AND usename IS NOT NULL AND pid <> pg_backend_pid() GROUP BY usename) s"
}

restore() { # file [--force]
  local path=$1 force=${2:-} started restore_error live report newer older sessions
  [[ $path == /* ]] || path="$TARGET/$path"
  [ -f "$path" ] || fail 1 "no backup \"$1\" in $TARGET: \`backup list\` shows the ones there; the database is untouched."
  check_backup "$path" ||
    fail 1 "\"$1\" is not a complete backup ($CHECK_PROBLEM); the database is untouched: restore another one (\`backup list\`)."
  live=$(live_migrations 2>&1) ||
    fail 1 "cannot read the database's migrations, the database is untouched: $(head -n 1 <<<"$live")"
  # The release boundary, before anything changes: this release's code cannot migrate a later release's schema.
  newer=$(comm -13 <(sort <<<"$live") <(sort <<<"$CHECK_MIGRATIONS") | paste -sd ' ')
  if [ -n "$live" ] && [ -n "$newer" ] && [ "$force" != --force ]; then
    fail 1 "\"$1\" was taken by a later release than this database's (it holds $newer); the database is untouched: restore it with that release's image or a later one (the one whose migrations include $(tail -n 1 <<<"$CHECK_MIGRATIONS")), or add --force to restore it here anyway (this release's API then cannot serve it)."
  fi
  # Under a running API, only a backup of the database's own release: its requests then see the rows before or after
  # the one transaction (or a 503 while they wait on it). Another release's schema would answer them 500s.
  older=$(comm -23 <(sort <<<"$live") <(sort <<<"$CHECK_MIGRATIONS") | paste -sd ' ')
  if [ -n "$older$newer" ]; then
    sessions=$(other_sessions 2>&1) || fail 1 "cannot read the database's sessions, the database is untouched: $sessions"
    [ -z "$sessions" ] ||
      fail 1 "other sessions are connected to the database: $sessions, and the backup's migrations are not this database's ($([ -n "$older" ] && echo "it lacks $older" || echo "it holds $newer")), a schema the running API was not built for; the database is untouched: stop the API first (\`docker compose stop api\`; on Kubernetes, scale the Deployment to 0), then restore again."
  fi
  started=$(now_ms)
  restore_error=$(mktemp) || exit 1
  # One transaction: the schema's objects dropped, the archive applied, the refusals and sequences kept; or nothing.
  if ! report=$(psql "${DB[@]}" -XAtq -v ON_ERROR_STOP=1 --single-transaction -c "$RESTORE_BEFORE" \
    -f <(pg_restore --no-owner --no-privileges --file=- "$path") -c "$RESTORE_AFTER" 2>"$restore_error"); then
    fail 1 "restoring \"$1\" failed and was rolled back, the database is untouched: $(grep -m 1 ERROR "$restore_error" || head -n 1 "$restore_error")"
  fi
  rm -f "$restore_error"
  log 30 'backup restored' file="${path##*/}" durationMs="$(($(now_ms) - started))" \
    pets="$CHECK_PETS" apiKeys="$CHECK_API_KEYS"
  echo "Restored ${path##*/}: $CHECK_PETS animals, $CHECK_API_KEYS API keys."
  sed -n 's/^report: //p' <<<"$report"
  migrations_verdict "$live" "$CHECK_MIGRATIONS"
}

# Exit 0 while the last run (in this container) succeeded and the newest backup is younger than twice
# BACKUP_INTERVAL; otherwise the reason, exit 1.
health() {
  local interval newest age future
  interval=$(duration_seconds BACKUP_INTERVAL "${BACKUP_INTERVAL:-$DEFAULT_INTERVAL}") || exit 1
  [ ! -e "$FAILED_MARK" ] || fail 1 'the last backup failed: `docker compose logs backup` says why.'
  future=$(backups_newest_first future | paste -sd ' ')
  [ -z "$future" ] || fail 1 "backups dated in the future ($future): $FUTURE_ADVICE."
  [ ! -s "$TARGET/$HELD" ] ||
    fail 1 "retention holds back $(grep -c . "$TARGET/$HELD") backups with more than twice the rows of the newest: check the database (a mass delete?); once the data is as meant, run \`backup accept-shrink\`."
  newest=$(backups_newest_first | head -n 1)
  [ -n "$newest" ] || fail 1 "no backup in $TARGET yet."
  age=$(($(now_s) - $(stat -c %Y "$TARGET/$newest")))
  [ "$age" -ge 0 ] && [ "$age" -lt $((2 * interval)) ] ||
    fail 1 "the newest backup, $newest, is ${age}s old: more than twice BACKUP_INTERVAL; \`docker compose logs backup\` says why."
  echo "healthy: $newest is ${age}s old."
}

# The schedule. A stop (SIGTERM) while it sleeps or dumps ends it at once, the partial file removed; one while a
# finished backup is being renamed and pruned waits for that to end.
schedule() {
  local interval newest due wait_ms
  interval=$(duration_seconds BACKUP_INTERVAL "${BACKUP_INTERVAL:-$DEFAULT_INTERVAL}") || exit 1
  trap on_stop TERM INT
  log 30 'backup schedule started' directory="$TARGET" intervalSeconds="$interval" keep="$KEEP" \
    keepWeekly="$KEEP_WEEKLY" keepMonthly="$KEEP_MONTHLY"
  # Partial files a killed run left behind (never one being written: those are younger).
  find "$TARGET" -maxdepth 1 -name ".$PREFIX*$SUFFIX.partial" -mmin +60 -delete 2>/dev/null
  # On a first start, `db` is up before the migrations have created the tables a backup must hold.
  local waited=0
  until [ "$(psql "${DB[@]}" -XAtq -c "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'
      AND tablename IN ('pets', 'api_keys', 'migrations')" 2>/dev/null)" = 3 ]; do
    [ "$waited" -eq 1 ] || log 30 'waiting for the migrations before the first backup'
    waited=1
    sleep 2 &
    wait $!
  done
  newest=$(backups_newest_first | head -n 1)
  due=$(now_ms)
  report_future
  # From min(now, mtime): a file stamped ahead of now must not push the next run into the future.
  if [ -n "$newest" ]; then
    local written
    written=$(stat -c %Y "$TARGET/$newest")
    [ "$written" -le "$(now_s)" ] || written=$(now_s)
    due=$(((written + interval) * 1000))
  fi
  while true; do
    wait_ms=$((due - $(now_ms)))
    if [ "$wait_ms" -gt 0 ]; then
      sleep "$((wait_ms / 1000)).$(printf %03d $((wait_ms % 1000)))" &
      wait $!
    fi
    # Start to start: a slow backup does not push the next ones back.
    due=$(($(now_ms) + interval * 1000))
    # A failed one (logged) is tried again after a minute, or after the interval when that is shorter.
    take_backup >/dev/null || due=$(($(now_ms) + (interval < 60 ? interval : 60) * 1000))
  done
}

main() {
  TARGET=${BACKUP_TARGET:-/backups}
  KEEP=$(keep_count BACKUP_KEEP "${BACKUP_KEEP:-$DEFAULT_KEEP}") || exit 1
  KEEP_WEEKLY=$(keep_count BACKUP_KEEP_WEEKLY "${BACKUP_KEEP_WEEKLY:-$DEFAULT_KEEP_WEEKLY}" 0) || exit 1
  KEEP_MONTHLY=$(keep_count BACKUP_KEEP_MONTHLY "${BACKUP_KEEP_MONTHLY:-$DEFAULT_KEEP_MONTHLY}" 0) || exit 1
  METRICS=${BACKUP_METRICS-$TARGET/metrics/animal-store-backup.prom}
  [ -d "$TARGET" ] || fail 1 "the backup directory $TARGET does not exist: mount one there (BACKUP_DIR in compose)."
  case "${1:-}" in
    '')
      connect
      write_metrics 0
      schedule
      ;;
    now)
      connect
      take_backup || fail 1 'the backup failed (the line above says why); nothing was kept.'
      ;;
    list) list ;;
    health) health ;;
    accept-shrink) accept_shrink ;;
    restore)
      [ $# -eq 2 ] || { [ $# -eq 3 ] && [ "$3" = --force ]; } || {
        echo "$USAGE" >&2
        exit 2
      }
      connect
      restore "$2" "${3:-}"
      ;;
    *)
      echo "$USAGE" >&2
      exit 2
      ;;
  esac
}

# Sourced (by the tests of its duration rule): functions only.
(return 0 2>/dev/null) || main "$@"
