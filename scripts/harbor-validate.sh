#!/usr/bin/env bash
# Load and validate exported Harbor task directories with Harbor's own package (harbor on PyPI).
#
# harbor needs Python >= 3.12, so it lives in its own venv (.venv-harbor, gitignored), created on
# first use with $HARBOR_PYTHON (default: the first python3.13/python3.12 found, or pyenv's 3.12.1).
# Every directory holding a task.toml under the given roots is loaded with harbor.models.task.task.Task
# (task.toml through harbor's TaskConfig, the layout and test checks), checked with
# Task.is_valid_dir, and linted with harbor.lint.task.lint_task (harbor's default rules).
#
# Usage: scripts/harbor-validate.sh DIR [DIR...]
# Exit: 0 every task valid, 1 some task invalid, 2 usage, 3 harbor unavailable (no interpreter/install).
set -euo pipefail

HARBOR_VERSION="${HARBOR_VERSION:-0.26.0}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${HARBOR_VENV:-$ROOT/.venv-harbor}"

log() { printf '[harbor-validate] %s\n' "$*" >&2; }

if [[ $# -lt 1 ]]; then
  log "usage: $0 DIR [DIR...]"
  exit 2
fi

find_python() {
  local candidate
  for candidate in "${HARBOR_PYTHON:-}" "$(command -v python3.13 || true)" "$(command -v python3.12 || true)" \
      /root/.pyenv/versions/3.12.1/bin/python; do
    if [[ -n "$candidate" && -x "$candidate" ]] && \
        "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

# one builder at a time (parallel test workers validate at once): the others wait, then reuse it
mkdir -p "$(dirname "$VENV")"
exec 9>"$VENV.lock"
flock 9
if ! "$VENV/bin/python" -c "import harbor, importlib.metadata as m; assert m.version('harbor') == '$HARBOR_VERSION'" \
    2>/dev/null; then
  if ! PYTHON="$(find_python)"; then
    log "no Python >= 3.12 found (set HARBOR_PYTHON)"
    exit 3
  fi
  log "creating $VENV with $PYTHON and installing harbor==$HARBOR_VERSION"
  rm -rf "$VENV"
  if ! "$PYTHON" -m venv "$VENV" || ! "$VENV/bin/pip" install -q "harbor==$HARBOR_VERSION" >&2; then
    log "could not install harbor==$HARBOR_VERSION"
    exit 3
  fi
fi

flock -u 9
exec 9>&-

exec "$VENV/bin/python" - "$@" <<'PY'
import sys
import warnings
from pathlib import Path

from harbor.lint.models import DEFAULT_RULES, LintRule
from harbor.lint.task import lint_task
from harbor.models.task.task import Task

# Findings reported as warnings, not failures: images pinned by tag, not digest (offline exports
# build FROM a local base image with no registry digest; portable ones FROM python:3.11-slim), and
# a verifier sharing the agent's sandbox in terminal bundles (tests/ read the agent's /app, the
# Terminal-Bench convention). Composed and world exports run Harbor's separate verifier in both
# modes ([verifier] environment_mode = "separate"), so shared-verifier fails them.
ADVISORY = {LintRule.SHARED_VERIFIER, LintRule.UNPINNED_IMAGE}
SEPARATE_FAMILIES = {"compose", "world"}

failed = 0
tasks = sorted({p.parent for root in sys.argv[1:] for p in Path(root).rglob("task.toml")})
if not tasks:
    print(f"no task.toml under {' '.join(sys.argv[1:])}")
    sys.exit(1)
for path in tasks:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            task = Task(path)
            problems = [] if Task.is_valid_dir(path) else ["Task.is_valid_dir is False"]
            findings = lint_task(path, selected_rules=set(DEFAULT_RULES))
    except Exception as e:  # any load error is a finding
        problems, findings, task = [f"{type(e).__name__}: {e}"], [], None
    family = (task.config.metadata.get("envpipeline") or {}).get("family") if task else None
    advisory = ADVISORY - {LintRule.SHARED_VERIFIER} if family in SEPARATE_FAMILIES else ADVISORY
    problems += [f"{f.rule.value}: {f.message}" for f in findings if f.rule not in advisory]
    advisories = sorted({f.rule.value for f in findings if f.rule in advisory})
    if problems:
        failed += 1
        print(f"FAIL {path}")
        for problem in problems:
            print(f"  {problem}")
    else:
        warn = f"; warnings: {', '.join(advisories)}" if advisories else ""
        print(f"OK {path} ({task.name}, instruction {len(task.instruction)} chars{warn})")
print(f"{len(tasks) - failed}/{len(tasks)} task directories valid (harbor {__import__('importlib.metadata').metadata.version('harbor')})")
sys.exit(1 if failed else 0)
PY
