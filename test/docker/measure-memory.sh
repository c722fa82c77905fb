#!/usr/bin/env bash
# The API container's memory (`docker stats` every second) at idle, at its peak under autocannon at 50 connections on
# each route in turn, and after. After `npm run test:docker` (which builds the images), with the same DOCKER_HOST:
#   POSTGRES_IMAGE=animal-store-stand-in/postgres:15 test/docker/measure-memory.sh [seconds per route, default 30]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-30}
export COMPOSE_PROJECT_NAME=animal-store-memory-$$ PORT=${PORT:-3999}
compose() { docker-compose -f docker-compose.yml -f test/docker/measure-memory.override.yml "$@"; }
trap 'compose down -v -t 5 >/dev/null 2>&1' EXIT
compose up -d >/dev/null 2>&1
api=$(compose ps -q api)
for _ in $(seq 1 60); do
  [ "$(/usr/bin/docker inspect -f '{{.State.Health.Status}}' "$api")" = healthy ] && break
  sleep 1
done
KEY=$(compose run --rm -T migrate node dist/src/cli/apikey.js create memory 2>/dev/null)
base=http://127.0.0.1:$PORT
memory() { /usr/bin/docker stats --no-stream --format '{{.MemUsage}}' "$api" | cut -d/ -f1 | tr -d ' '; }
echo "idle: $(memory)"
load() { # name, then autocannon's arguments
  local name=$1 samples peak
  shift
  samples=$(mktemp)
  (while :; do memory >>"$samples"; sleep 1; done) &
  local sampler=$!
  node_modules/.bin/autocannon --connections 50 --duration "$seconds" --json -H "Authorization=Bearer $KEY" "$@" \
    2>/dev/null | node -e 'let s="";process.stdin.on("data",(c)=>(s+=c)).on("end",()=>{const r=JSON.parse(s);
      process.stdout.write(`${r.requests.total} requests (${r["4xx"]} 4xx, ${r["5xx"]} 5xx), `)})'
  kill "$sampler"
  wait "$sampler" 2>/dev/null || true
  peak=$(sort -h "$samples" | tail -n 1)
  echo "$name: peak $peak"
  rm -f "$samples"
}
load 'POST /v1/pets' -m POST -H 'Content-Type=application/json' -b '{"name":"Rex","categoryId":1}' "$base/v1/pets"
load 'GET /v1/pets?limit=20' "$base/v1/pets?status=available&limit=20"
load 'GET /v1/pets/1' "$base/v1/pets/1"
echo "after: $(memory)"
