"""What a red-team policy gets to attack a world task: a fresh W0 copy, the reference run, a recorder.

Kept apart from the gate (`redteam/world.py`) so that `redteam/base.py` can name it without an
import cycle through the policy registry.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envpipeline.models.world_task import WorldTask
from envpipeline.worlds.worldstore import WorldStore


@dataclass
class WorldReference:
    """A clean run of a world task's scripted solution: its trajectory and final state."""

    trajectory: list[dict[str, Any]]
    final_hash: str
    writes: list[str]
    #: the day folder the run ended in (kept while the red team attacks), when there is one
    final_world: Path | None = None


@dataclass
class WorldAttack:
    """What a policy gets: the task, a fresh copy of W0 as stored (`world`), the reference run."""

    task: WorldTask
    w0: Path
    world: Path
    reference: WorldReference
    trajectory: list[dict[str, Any]] = field(default_factory=list)

    def run_solution(self, task: WorldTask | None = None) -> None:
        """Run a (possibly modified) scripted solution on `world` with a mistake-free agent."""
        # imported here: the agents pull in the HTTP and MCP clients (tens of MB), and every
        # policy module names this class, so the compose red team would load them for nothing
        from envpipeline.worlds.agents import ScriptedAgent

        result = ScriptedAgent("expert", hinted=True, seed="red-team", error_rate=0.0).run(
            task or self.task, self.world
        )
        self.trajectory += result.trajectory

    def replay_reference(self) -> None:
        """Do what the reference did: end where its run ended, with its trajectory.

        The reference is `run_solution` on a fresh copy of W0, which is what this attack's world
        is before it acts: running the mistake-free scripted solution again would end in the same
        state through the same calls (its runs are deterministic: the gate's ``moot`` compares
        their hashes), so the reference's final folder is copied instead of running it again."""
        if self.reference.final_world is None or self.trajectory:
            self.run_solution()
            return
        shutil.rmtree(self.world)
        shutil.copytree(self.reference.final_world, self.world, symlinks=True)
        self.trajectory += [dict(message) for message in self.reference.trajectory]

    def store(self) -> WorldStore:
        """The day's app databases, to act on directly (record each act with `record`)."""
        return WorldStore(self.world)

    def record(self, name: str, arguments: dict[str, Any], result: str = "ok") -> None:
        """Record one call as the interface it stands for (``web.POST /checkout``, ``mcp.dm_send``...)."""
        call_id = f"rt_{len(self.trajectory)}"
        function = {"name": name, "arguments": repr(arguments)}
        self.trajectory += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": call_id, "type": "function", "function": function}],
            },
            {"role": "tool", "tool_call_id": call_id, "name": name, "content": result},
        ]
