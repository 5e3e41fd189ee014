#!/usr/bin/env bash
# Build the offline base image envpipeline/base:bookworm that every task Dockerfile starts FROM.
#
# No registry is reachable on our machines, so the image is not pulled: mmdebstrap builds a Debian
# bookworm root filesystem from the Debian package mirror into a tarball and `docker import` turns
# it into an image. The image carries the sha256 of this script and of its package list
# (envpipeline/sandbox/base-packages.txt) as a label; rerunning the script
# is a no-op while the label matches, and a changed script rebuilds.
#
# Usage: scripts/build-base-image.sh [--force]
# Environment: ENVPIPELINE_BASE_IMAGE (default envpipeline/base:bookworm),
#              DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail

IMAGE="${ENVPIPELINE_BASE_IMAGE:-envpipeline/base:bookworm}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SUITE=bookworm
LABEL=org.envpipeline.base.version
# The package list is shared with the local sandbox's root filesystem (envpipeline/sandbox/rootfs.py).
PACKAGE_LIST="$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../envpipeline/sandbox/base-packages.txt"
mapfile -t PACKAGES < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$PACKAGE_LIST")

log() { printf '[build-base-image] %s\n' "$*" >&2; }

SCRIPT="$(readlink -f "${BASH_SOURCE[0]}")"
VERSION="$(cat "$SCRIPT" "$PACKAGE_LIST" | sha256sum | cut -c1-16)"

if ! command -v docker >/dev/null 2>&1; then
  log "docker CLI not found; install Docker first"
  exit 1
fi

if [[ "${1:-}" != "--force" ]] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
  current="$(docker image inspect -f "{{ index .Config.Labels \"$LABEL\" }}" "$IMAGE" 2>/dev/null || true)"
  if [[ "$current" == "$VERSION" ]]; then
    log "$IMAGE is up to date (version $VERSION); nothing to do"
    exit 0
  fi
  log "$IMAGE has version '${current:-none}', this script is $VERSION: rebuilding"
fi

if ! command -v mmdebstrap >/dev/null 2>&1; then
  log "mmdebstrap is missing: installing it with apt-get"
  if [[ "$(id -u)" -ne 0 ]]; then
    log "need root to apt-get install mmdebstrap (or install it yourself)"
    exit 1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q mmdebstrap
fi

WORK="$(mktemp -d /tmp/envpipeline-base.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
TARBALL="$WORK/rootfs.tar"
start=$SECONDS

include="$(IFS=,; echo "${PACKAGES[*]}")"
log "mmdebstrap $SUITE (variant minbase) from $MIRROR into $TARBALL"
log "packages: $include"
# Documentation, man pages and translations are dropped to keep the image small. Debian's
# EXTERNALLY-MANAGED marker (PEP 668) is removed so `pip install` in a task Dockerfile works as it
# does on the python:3.x images the base stands in for (terminal/images.py).
mmdebstrap \
  --variant=minbase \
  --include="$include" \
  --aptopt='Acquire::Retries "3"' \
  --aptopt='APT::Install-Recommends "false"' \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin "$1"/var/log/*.log' \
  --customize-hook='mkdir -p "$1"/app "$1"/logs/verifier "$1"/tests "$1"/solution' \
  --customize-hook='rm -f "$1"/usr/lib/python3*/EXTERNALLY-MANAGED' \
  "$SUITE" "$TARBALL" "$MIRROR"
log "rootfs tarball: $(du -h "$TARBALL" | cut -f1) after $((SECONDS - start)) s"

log "docker import -> $IMAGE"
docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV PYTHONDONTWRITEBYTECODE=1' \
  --change 'WORKDIR /app' \
  --change "LABEL $LABEL=$VERSION" \
  --change 'CMD ["/bin/bash"]' \
  --message "envpipeline base image ($SUITE, mmdebstrap minbase, version $VERSION)" \
  "$TARBALL" "$IMAGE" >/dev/null

log "smoke test: python (python3) + pytest + sqlite3 + pip + tmux with --network none"
docker run --rm --network none "$IMAGE" bash -c \
  'python -c "import pytest, sqlite3, venv" && python -m pip --version && tmux -V' >/dev/null
size="$(docker image inspect -f '{{ .Size }}' "$IMAGE")"
log "built $IMAGE (version $VERSION, $((size / 1024 / 1024)) MiB) in $((SECONDS - start)) s"
