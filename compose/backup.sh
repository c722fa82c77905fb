#!/usr/bin/env bash
# Logical backups of the animal store's database: pg_dump in its custom format, one file per backup, the newest
# BACKUP_KEEP kept. The compose files' `backup` service runs it on the same PostgreSQL image as `db` (so pg_dump and
# pg_restore are the server's own version), and k8s/backup-cronjob.yaml ships the same file. docs/operating.md,
# "Backups and restore".
#
#   backup                 schedule: a backup at start, unless the newest is younger than BACKUP_INTERVAL (a restart
#                          never pushes good backups out), then one every BACKUP_INTERVAL; a failed one is tried
#                          again after a minute
#   backup now             one backup at once; prints its file name on stdout
#   backup list            the backups, newest first, with size and time
#   backup restore <file>  restores one into the database, all or nothing
#
# Settings: BACKUP_INTERVAL (default 24h: a whole number above 0 followed by s, m, h or d, at most 3650d: the rule of
# the key CLI's durations, src/cli/duration.ts), BACKUP_KEEP (default 7), BACKUP_TARGET (the directory, /backups).
# The database: DATABASE_URL, else libpq's PGHOST, PGUSER, PGDATABASE; the password from PGPASSWORD or the file
# POSTGRES_PASSWORD_FILE names. One JSON line on stderr per backup (or failure); stdout carries only what a command
# prints.
set -uo pipefail

PREFIX=animal-store-
SUFFIX=.dump
DEFAULT_INTERVAL=24h
DEFAULT_KEEP=7
MAX_DURATION_SECONDS=$((3650 * 86400))
USAGE='Usage: backup [now | list | restore <file>]   (no command: a backup every BACKUP_INTERVAL, the newest BACKUP_KEEP kept)'

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

keep_count() { # text
  if [[ ! $1 =~ ^[1-9][0-9]{0,3}$ ]]; then
    echo "Invalid BACKUP_KEEP \"$1\": use a whole number of backups to keep, from 1 to 9999." >&2
    return 1
  fi
  echo "$1"
}

now_ms() { date +%s%3N; }

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

backups_newest_first() { # the file names, newest first: names sort by their UTC time
  local file
  for file in "$TARGET/$PREFIX"*"$SUFFIX"; do
    [ -f "$file" ] && echo "${file##*/}"
  done | sort -r
}

# Reads a backup whole (its table of contents and every table's data, which `pg_restore --list` alone does not
# read) and sets CHECK_PETS and CHECK_API_KEYS to the rows it holds. Status 1 for a truncated or foreign file, with
# the reason in CHECK_PROBLEM.
CHECK_PROBLEM=''
CHECK_PETS=''
CHECK_API_KEYS=''
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
  counts=$(pg_restore --file=- "$1" 2>"$errors" | awk '
    /^COPY public\.pets / { table = "pets"; next }
    /^COPY public\.api_keys / { table = "api_keys"; next }
    /^\\\.$/ { table = ""; next }
    table != "" { rows[table]++ }
    END { printf "%d %d\n", rows["pets"], rows["api_keys"] }')
  status=${PIPESTATUS[0]}
  if [ "$status" -ne 0 ]; then
    CHECK_PROBLEM=$(head -n 1 "$errors")
    rm -f "$errors"
    return 1
  fi
  rm -f "$errors"
  CHECK_PETS=${counts% *}
  CHECK_API_KEYS=${counts#* }
}

# The backup directory's owner gets the files (so an operator who created it reads them without root).
give_to_directory_owner() { # path
  if [ "$(id -u)" -eq 0 ]; then chown --reference="$TARGET" "$1" 2>/dev/null || true; fi
}

prune() {
  local file
  backups_newest_first | tail -n +$((KEEP + 1)) | while read -r file; do
    rm -f "$TARGET/$file" && log 30 'backup removed: more than BACKUP_KEEP' file="$file" keep="$KEEP"
  done
}

PARTIAL=''
# Set while a finished backup is renamed and the old ones pruned: a stop then waits for the end of it.
FINISHING=0
STOP_REQUESTED=0
# One backup: dumped under a temporary name, read back whole, then renamed; a failed one is logged and removed.
# Prints the file name on stdout.
take_backup() {
  local started name dump_error
  started=$(now_ms)
  name="$PREFIX$(date -u +%Y%m%dT%H%M%S.%3NZ)$SUFFIX"
  PARTIAL="$TARGET/.$name.partial"
  umask 077
  if ! dump_error=$(pg_dump "${DB[@]}" --format=custom --file="$PARTIAL" 2>&1); then
    rm -f "$PARTIAL"
    PARTIAL=''
    log 50 'backup failed: pg_dump' file="$name" error="$(echo "$dump_error" | head -n 1)"
    return 1
  fi
  if ! check_backup "$PARTIAL"; then
    rm -f "$PARTIAL"
    PARTIAL=''
    log 50 'backup failed: the file written does not read back whole' file="$name" error="$CHECK_PROBLEM"
    return 1
  fi
  FINISHING=1
  chmod 600 "$PARTIAL"
  give_to_directory_owner "$PARTIAL"
  mv "$PARTIAL" "$TARGET/$name"
  PARTIAL=''
  log 30 'backup written' file="$name" bytes="$(stat -c %s "$TARGET/$name")" \
    durationMs="$(($(now_ms) - started))" pets="$CHECK_PETS" apiKeys="$CHECK_API_KEYS"
  prune
  FINISHING=0
  echo "$name"
  if [ "$STOP_REQUESTED" -eq 1 ]; then exit 0; fi
}

on_stop() {
  if [ "$FINISHING" -eq 1 ]; then
    STOP_REQUESTED=1
    return
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

restore() { # file
  local path=$1 started restore_error
  [[ $path == /* ]] || path="$TARGET/$path"
  [ -f "$path" ] || fail 1 "no backup \"$1\" in $TARGET: \`backup list\` shows the ones there; the database is untouched."
  check_backup "$path" ||
    fail 1 "\"$1\" is not a complete backup ($CHECK_PROBLEM); the database is untouched: restore another one (\`backup list\`)."
  started=$(now_ms)
  # One transaction: either every object is dropped and recreated from the file, or nothing changed.
  if ! restore_error=$(pg_restore "${DB[@]}" --single-transaction --exit-on-error --clean --if-exists \
    --no-owner "$path" 2>&1); then
    fail 1 "restoring \"$1\" failed and was rolled back, the database is untouched: $(echo "$restore_error" | head -n 1)"
  fi
  log 30 'backup restored' file="${path##*/}" durationMs="$(($(now_ms) - started))" \
    pets="$CHECK_PETS" apiKeys="$CHECK_API_KEYS"
  echo "Restored ${path##*/}: $CHECK_PETS animals, $CHECK_API_KEYS API keys."
}

# The schedule. A stop (SIGTERM) while it sleeps or dumps ends it at once, the partial file removed; one while a
# finished backup is being renamed and pruned waits for that to end.
schedule() {
  local interval newest due wait_ms
  interval=$(duration_seconds BACKUP_INTERVAL "${BACKUP_INTERVAL:-$DEFAULT_INTERVAL}") || exit 1
  trap on_stop TERM INT
  log 30 'backup schedule started' directory="$TARGET" intervalSeconds="$interval" keep="$KEEP"
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
  if [ -n "$newest" ]; then due=$((($(stat -c %Y "$TARGET/$newest") + interval) * 1000)); fi
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
  KEEP=$(keep_count "${BACKUP_KEEP:-$DEFAULT_KEEP}") || exit 1
  [ -d "$TARGET" ] || fail 1 "the backup directory $TARGET does not exist: mount one there (BACKUP_DIR in compose)."
  case "${1:-}" in
    '')
      connect
      schedule
      ;;
    now)
      connect
      take_backup || fail 1 'the backup failed (the line above says why); nothing was kept.'
      ;;
    list) list ;;
    restore)
      [ $# -eq 2 ] || {
        echo "$USAGE" >&2
        exit 2
      }
      connect
      restore "$2"
      ;;
    *)
      echo "$USAGE" >&2
      exit 2
      ;;
  esac
}

# Sourced (by the tests of its duration rule): functions only.
(return 0 2>/dev/null) || main "$@"
