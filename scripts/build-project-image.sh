#!/usr/bin/env bash
# Build the project image envpipeline-project:<content hash> (and :latest) from
# deploy/docker-local/Dockerfile, FROM the offline base image (scripts/build-base-image.sh).
#
# The tag is a hash of the Dockerfile, the files it copies and the base image's id, so an
# unchanged tree is a no-op and a changed one rebuilds (Docker's layer cache keeps the
# dependency layer while pyproject.toml and requirements.lock stay the same). The build context
# is a tarball of exactly the copied files, never the repository folder (.venv, data, .git).
# Debian packages come from the mirror; Python packages from the index the host's pip uses, whose
# settings reach the build as build args (envpipeline.sandbox.registries).
#
# Usage: scripts/build-project-image.sh [--force]; prints the tag on stdout.
# Environment: ENVPIPELINE_BASE_IMAGE (default envpipeline/base:bookworm),
#              ENVPIPELINE_PROJECT_IMAGE (default envpipeline-project), PYTHON (default .venv/bin/python).
set -euo pipefail

cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
BASE="${ENVPIPELINE_BASE_IMAGE:-envpipeline/base:bookworm}"
REPOSITORY="${ENVPIPELINE_PROJECT_IMAGE:-envpipeline-project}"
PYTHON="${PYTHON:-.venv/bin/python}"
DOCKERFILE=deploy/docker-local/Dockerfile
SOURCES=(pyproject.toml requirements.lock README.md envpipeline envpipeline_verifiers resources assets)
LABEL=org.envpipeline.project.version

log() { printf '[build-project-image] %s\n' "$*" >&2; }

base_id="$(docker image inspect -f '{{ .Id }}' "$BASE" 2>/dev/null)" || {
  log "base image $BASE is missing: run \`make base-image\` first"
  exit 1
}
context() {  # the build context: the Dockerfile and the copied sources, without caches; the
  # project's folders under project/, which the Dockerfile copies in one step
  tar -c --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 \
    --exclude=__pycache__ --exclude='*.pyc' --exclude='*.egg-info' \
    --transform 's,^\(envpipeline\|envpipeline_verifiers\|resources\|assets\)\(/\|$\),project/\1\2,' \
    "$DOCKERFILE" "${SOURCES[@]}"
}
version="$( { context; echo "$base_id"; } | sha256sum | cut -c1-16)"
tag="$REPOSITORY:$version"

if [[ "${1:-}" != "--force" ]] && docker image inspect "$tag" >/dev/null 2>&1; then
  log "$tag is up to date; nothing to do"
else
  build_args=()
  while IFS= read -r arg; do build_args+=(--build-arg "$arg"); done < <(
    "$PYTHON" -c 'from envpipeline.sandbox.registries import registry_build_args as a
for k, v in sorted(a().items()): print(f"{k}={v}")'
  )
  log "building $tag FROM $BASE"
  start=$SECONDS
  # the classic builder takes a tarball on stdin; `-f` names the Dockerfile inside it
  context | docker build --pull=false --rm --force-rm --network default \
    --build-arg "BASE_IMAGE=$BASE" "${build_args[@]}" --label "$LABEL=$version" \
    -f "$DOCKERFILE" -t "$tag" - >&2
  size="$(docker image inspect -f '{{ .Size }}' "$tag")"
  log "built $tag ($((size / 1024 / 1024)) MiB) in $((SECONDS - start)) s"
fi
docker tag "$tag" "$REPOSITORY:latest"
echo "$tag"
