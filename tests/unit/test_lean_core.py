"""The lean core (`pip install envpipeline`, no extras) imports with nothing but its own dependencies.

Each check runs in a fresh interpreter whose import system refuses every third-party module outside
the core's dependency closure (pyproject.toml's `dependencies`, walked through the installed
distributions by scripts/lock.py): the application's stack (Dagster, Docker, SCIP, litellm, DuckDB,
MCP, click, numpy, ...) is as absent as in a trainer's environment. A module that needs an extra
must then say which one (`MissingExtraError`, "pip install 'envpipeline[<extra>]'"), never fail
with a bare ModuleNotFoundError.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from packaging.utils import canonicalize_name

from scripts.lock import closure, project_requirements

pytestmark = pytest.mark.slow  # each test starts an interpreter (1-5 s)

ROOT = Path(__file__).resolve().parents[2]
#: what a trainer's environment imports: models, services, rewards, environments, exports
CORE_MODULES = (
    "envpipeline.models",
    "envpipeline.models.task",
    "envpipeline.models.world_task",
    "envpipeline.models.dataset",
    "envpipeline.services",
    "envpipeline.services.registry",
    "envpipeline.rewards",
    "envpipeline.rewards.cfrr",
    "envpipeline.rubric",
    "envpipeline.agents.environment",
    "envpipeline.export.rows",
    "envpipeline.export.writers",
    "envpipeline.export.rewards",
    "envpipeline.export.envs",
    "envpipeline.export.card",
    "envpipeline.export.splits",
    "envpipeline.export.tool_names",
    "envpipeline.export.unified",
    "envpipeline.export.harbor",
    # the WildAWM gates and CompoWorld rollout groups build policies, which loads every kind
    "envpipeline.policies.registry",
    "envpipeline.policies.scripted",
    "envpipeline.policies.solver",
    "envpipeline.policies.recorded",
    "envpipeline.policies.llm_agent",
)
#: files that run inside exported task containers (not importable on the host by design)
NOT_HOST_MODULES = ("envpipeline.export.runtime",)
HEAVY = ("dagster", "docker", "pyscipopt", "litellm", "tenacity", "duckdb", "mcp", "click", "torch")

PROBE = r"""
import importlib, importlib.abc, json, pkgutil, sys

allowed = set(json.loads(sys.argv[1]))
targets = json.loads(sys.argv[2])


class CoreOnly(importlib.abc.MetaPathFinder):
    # refuses every module that is neither stdlib, envpipeline, nor a core dependency
    def find_spec(self, name, path, target=None):
        top = name.partition(".")[0]
        if top in allowed or top in sys.stdlib_module_names or top.startswith("_sysconfigdata"):
            return None
        raise ModuleNotFoundError(f"No module named {name!r} (not a core dependency)", name=name)


sys.meta_path.insert(0, CoreOnly())
import envpipeline
from envpipeline.errors import MissingExtraError

if targets == "ALL":
    targets = [m.name for m in pkgutil.walk_packages(envpipeline.__path__, "envpipeline.", onerror=print)]
outcome = {}
for name in targets:
    try:
        importlib.import_module(name)
        outcome[name] = {"ok": True}
    except MissingExtraError as e:
        outcome[name] = {"extra": e.extra, "message": str(e)}
    except Exception as e:
        outcome[name] = {"error": f"{type(e).__name__}: {e}"}
print(json.dumps(outcome))
"""


def core_importable_modules() -> list[str]:
    """Top-level module names of the core's dependency closure (e.g. pydantic, pyarrow, yaml)."""
    core = set(closure(project_requirements(()), required=True))
    return sorted(
        module
        for module, dists in metadata.packages_distributions().items()
        if any(canonicalize_name(d) in core for d in dists)
    ) + ["envpipeline"]


def probe(targets: list[str] | str, *, allowed: list[str] | None = None, path: Path = ROOT) -> dict[str, Any]:
    """module -> {"ok"} | {"extra", "message"} | {"error"} when imported with only `allowed` installed."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(allowed or core_importable_modules()), json.dumps(targets)],
        cwd=path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(path), "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_the_core_dependencies_leave_out_the_heavy_stack():
    allowed = core_importable_modules()
    assert {"pydantic", "pyarrow", "orjson", "yaml"} <= set(allowed)
    assert [m for m in HEAVY if m in allowed] == []


def test_core_modules_and_trainer_environments_import_without_any_extra():
    trainers = ["envpipeline.trainers"] if (ROOT / "envpipeline" / "trainers").is_dir() else []
    outcome = probe([*CORE_MODULES, *trainers])
    assert {name: result for name, result in outcome.items() if "ok" not in result} == {}


def test_every_module_imports_or_names_the_extra_it_needs():
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    outcome = probe("ALL")
    host = {n: r for n, r in outcome.items() if not n.startswith(NOT_HOST_MODULES)}
    assert len(host) > 200
    assert {n: r["error"] for n, r in host.items() if "error" in r} == {}
    assert {n: r["extra"] for n, r in host.items() if "extra" in r and r["extra"] not in extras} == {}
    lake = host["envpipeline.store.lake"]
    assert lake.get("extra") == "cli", lake
    assert "needs duckdb" in lake["message"] and "pip install 'envpipeline[cli]'" in lake["message"]
    assert host["envpipeline.export.rows"] == {"ok": True}


def test_the_probe_flags_an_unguarded_import_and_accepts_a_guarded_one(tmp_path):
    """The check itself: a module importing a non-core library without naming an extra is an error."""
    package = tmp_path / "envpipeline"
    package.mkdir()
    for source in (ROOT / "envpipeline").glob("*.py"):  # errors.py and friends, stdlib only
        (package / source.name).write_text(source.read_text())
    (package / "unguarded.py").write_text("import duckdb\n")
    (package / "guarded.py").write_text(
        "from envpipeline.errors import MissingExtraError\n"
        "try:\n    import duckdb\nexcept ImportError as missing:\n"
        "    raise MissingExtraError('cli', missing, needed_by=__name__) from missing\n"
    )
    outcome = probe(["envpipeline.unguarded", "envpipeline.guarded"], path=tmp_path)
    assert "ModuleNotFoundError" in outcome["envpipeline.unguarded"]["error"]
    assert outcome["envpipeline.guarded"]["extra"] == "cli"
