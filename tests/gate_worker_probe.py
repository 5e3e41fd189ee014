"""Run inside a gating worker by `tests/unit/test_world_gate_reuse.py`: gate one task and report
what the worker had to import for it (nothing of the project, when its fork server preloaded)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any


def gate_and_list_imports(task: Any, day_dir: Path, work: Path) -> dict[str, Any]:
    """Gate `task` as a worker does; the modules that were imported for it, and whether the
    world agents were imported before it started."""
    before = set(sys.modules)
    agents_ready = "envpipeline.worlds.agents" in before
    from envpipeline.worlds.gate_processes import gates_in_worker
    from envpipeline.worlds.gates import GateConfig

    gates, _ = gates_in_worker(task, day_dir, work, GateConfig())
    return {
        "agents_ready": agents_ready,
        "imported": sorted(set(sys.modules) - before),
        "gates": [g.name for g in gates],
    }
