"""Terminal seeds: where bundles come from (a seeds folder or a procedural family), and their status.

A seed key names one bundle and is a safe partition key. Procedural seeds are written
``fam-<family>-<difficulty>-<seed>``; folder seeds take the folder name (sanitized).
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
    info: dict[str, Any] = {"seed_key": key}
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
        if (source / "task.toml").exists():
            shutil.copytree(source, target, symlinks=True)
            kind = "harbor"
        else:
            from envpipeline.terminal.importer import import_terminal_bench

            import_terminal_bench(source, target)
            kind = "terminal-bench"
        info |= {
            "source_kind": kind,
            "source": str(source),
            "family": "",
            "difficulty": "",
            "skills": "[]",
            "knobs": "{}",
        }
    info |= {
        "bundle_path": str(target),
        "fingerprint": bundle_fingerprint(target),
        "source_fingerprint": source_fingerprint(key, seeds_folder),
    }
    return info


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
