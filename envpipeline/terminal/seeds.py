"""Terminal seeds: where bundles come from (a seeds folder or a procedural family), and their status.

A seed key names one bundle and is a safe partition key. Procedural seeds are written
``fam-<family>-<difficulty>-<seed>``; folder seeds take the folder name (sanitized).

Folder seeds (Harbor bundles and Terminal-Bench 1 tasks) go through `seed_import.import_bundle`,
the same path as ``bundle import``: scripts rewritten for offline sandboxes, image substitutions,
flags and warnings recorded. The row carries them (``import_status``, ``import_error``,
``substitutions``, ``rewrites``, ``flags``, ``import_warnings``; JSON lists) so the Dagster UI shows
them. A folder that cannot be imported (no ``solution/``, unreadable ``task.toml``) is copied as it
is and recorded with ``import_status = "failed"`` and the reason: gold verification then gives it
a verdict (``no_solution``, ``invalid_bundle``) and the seed fails, never the run.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path
from typing import Any, Literal

from envpipeline.errors import ConfigError
from envpipeline.terminal.families.base import DIFFICULTIES, write_generated
from envpipeline.terminal.families.registry import all_families, get_family
from envpipeline.terminal.verify import VerificationResult, bundle_fingerprint

PROCEDURAL = re.compile(r"^fam-(?P<family>[a-z0-9-]+?)-(?P<difficulty>easy|medium|hard)-(?P<seed>\d+)$")
SeedStatus = Literal["verified", "failed", "quarantined"]
MAX_LOG_CHARS = 4000


def seed_key_for(name: str) -> str:
    """A partition-safe key for a folder name."""
    key = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")[:120]
    if not key:
        raise ConfigError(f"cannot derive a seed key from {name!r}")
    return key


def procedural_key(family: str, difficulty: str, seed: int) -> str:
    """The seed key of one procedural bundle."""
    return f"fam-{family}-{difficulty}-{seed}"


def default_procedural_keys(per_family: int = 1) -> list[str]:
    """One medium bundle (or more) per shipped family: the default job's seeds."""
    return [procedural_key(name, "medium", s) for name in all_families() for s in range(per_family)]


def discover_seed_folders(root: Path) -> dict[str, Path]:
    """Bundles dropped into a seeds folder: Harbor (task.toml) or Terminal-Bench 1 (task.yaml)."""
    if not root.is_dir():
        return {}
    found = {}
    for child in sorted(root.iterdir()):
        if child.is_dir() and ((child / "task.toml").exists() or (child / "task.yaml").exists()):
            found[seed_key_for(child.name)] = child
    return found


def materialize_seed(key: str, bundles_root: Path, seeds_folder: Path | None = None) -> dict[str, Any]:
    """Write the bundle of seed `key` under `bundles_root/<key>` and describe it as a row."""
    target = bundles_root / key
    if target.exists():
        shutil.rmtree(target)
    match = PROCEDURAL.match(key)
    info: dict[str, Any] = {"seed_key": key, **NO_IMPORT}
    if match:
        family = get_family(match["family"])
        difficulty = match["difficulty"]
        if difficulty not in DIFFICULTIES:
            raise ConfigError(f"unknown difficulty in seed key {key}")
        task = family.generate(int(match["seed"]), family.knobs_for(difficulty), difficulty)
        write_generated(task, target)
        info |= {
            "source_kind": "procedural",
            "source": f"family:{family.name}",
            "family": family.name,
            "difficulty": difficulty,
            "skills": json.dumps(task.skills),
            "knobs": json.dumps(task.knobs),
        }
    else:
        source = discover_seed_folders(seeds_folder or Path("/nonexistent")).get(key)
        if source is None:
            raise ConfigError(f"seed '{key}' is neither procedural nor in the seeds folder {seeds_folder}")
        kind = "harbor" if (source / "task.toml").exists() else "terminal-bench"
        info |= {
            "source_kind": kind,
            "source": str(source),
            "family": "",
            "difficulty": "",
            "skills": "[]",
            "knobs": "{}",
            **import_folder_seed(source, target),
        }
    info |= {
        "bundle_path": str(target),
        "fingerprint": bundle_fingerprint(target),
        "source_fingerprint": source_fingerprint(key, seeds_folder),
    }
    return info


#: The import columns of a procedural seed (nothing imported).
NO_IMPORT: dict[str, Any] = {
    "import_status": "generated",
    "import_error": "",
    "substitutions": "[]",
    "rewrites": "[]",
    "flags": "[]",
    "import_warnings": "[]",
}


def import_folder_seed(source: Path, target: Path) -> dict[str, Any]:
    """Import one seeds-folder bundle to `target`; the import columns of its row.

    A folder the importer refuses is copied as it is (so verification can name what is wrong) and
    its row says ``import_status = "failed"`` with the importer's reason.
    """
    from envpipeline.terminal.import_report import ImportReport
    from envpipeline.terminal.seed_import import PER_BUNDLE_ERRORS, import_bundle

    try:
        report = import_bundle(source, target, overwrite=True)
    except PER_BUNDLE_ERRORS as e:
        report = ImportReport(task=target.name, source=str(source), out=str(target), error=str(e))
    if not report.ok:
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(source, target, symlinks=True)
    return {
        "import_status": report.status,
        "import_error": report.error or "",
        "substitutions": json.dumps([x.model_dump() for x in report.substitutions]),
        "rewrites": json.dumps([x.model_dump() for x in report.rewrites]),
        "flags": json.dumps([x.model_dump() for x in report.flags]),
        "import_warnings": json.dumps(report.warnings),
    }


def next_status(previous: str | None, passed: bool) -> SeedStatus:
    """A seed that passed before and fails now is quarantined; one that never passed has failed."""
    if passed:
        return "verified"
    return "quarantined" if previous in ("verified", "quarantined") else "failed"


def verification_row(
    key: str, result: VerificationResult, status: SeedStatus, environment_fingerprint: str
) -> dict[str, Any]:
    """A lake row for one gold verification, with every trial's logs (truncated)."""
    trials = []
    for trial in result.trials:
        data = trial.model_dump(mode="json")
        for phase in ("agent_exec", "verifier_exec"):
            if data.get(phase):
                for stream in ("stdout", "stderr"):
                    data[phase][stream] = data[phase][stream][-MAX_LOG_CHARS:]
        trials.append(data)
    return {
        "seed_key": key,
        "bundle": result.bundle,
        "backend": result.backend,
        "verdict": result.verdict,
        "status": status,
        "oracle_rewards": json.dumps(result.oracle_rewards),
        "nop_reward": result.nop_reward,
        "nondeterministic": result.nondeterministic,
        "reasons": json.dumps(result.reasons),
        "fingerprint": result.fingerprint,
        "verifier_version": result.verifier_version,
        "environment_fingerprint": environment_fingerprint,
        "trials": json.dumps(trials),
        "red_team": red_team_json(result),
        "verified_at": time.time(),
    }


def red_team_json(result: VerificationResult) -> str:
    """The red_team column: each policy's outcome (JSON list; empty when the gate did not run)."""
    return json.dumps([o.model_dump(mode="json") for o in result.red_team])


def source_fingerprint(key: str, seeds_folder: Path | None = None) -> str:
    """What a seed's bundle is made from: the family module's code, or the seed folder's files."""
    import hashlib
    import inspect

    match = PROCEDURAL.match(key)
    if match:
        family = get_family(match["family"])
        module_file = inspect.getsourcefile(type(family)) or ""
        code = Path(module_file).read_bytes() if module_file else b""
        return hashlib.sha256(key.encode() + b"\0" + code).hexdigest()
    source = discover_seed_folders(seeds_folder or Path("/nonexistent")).get(key)
    return bundle_fingerprint(source) if source else ""
