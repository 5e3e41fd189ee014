"""Every lake table that stores a model, with its row codec: assets and commands write and read through these.

Each codec keeps the columns that queries and checks filter on (ids, status, flow) next to the
record; tables without a record model (pass rates, bundle verdicts) are plain rows written by
their stage.
"""

from __future__ import annotations

from envpipeline.models.dataset import AcceptedTask
from envpipeline.models.selection import Decision
from envpipeline.models.world import DaySnapshot, Persona
from envpipeline.models.world_task import GatedTask, WorldTask
from envpipeline.store.records import TASK_ROWS
from envpipeline.store.rows import RowCodec, to_json

__all__ = [
    "ACCEPTED_TASKS",
    "COMPOSED_TASKS",
    "GATED_WORLD_TASKS",
    "PERSONAS",
    "SELECTOR_DECISIONS",
    "WORLD_DAYS",
    "WORLD_TASKS",
]

#: composed_task_specs and verified_composed_tasks
COMPOSED_TASKS = TASK_ROWS

PERSONAS = RowCodec(
    Persona, embed="persona", derived=lambda p: {"persona_id": p.persona_id, "occupation": p.occupation}
)

#: persona_worlds: one row per built day (the persona and the day folder come as extra columns)
WORLD_DAYS = RowCodec(DaySnapshot, derived=lambda d: {"passed": d.passed})

WORLD_TASKS = RowCodec(
    WorldTask,
    embed="task",
    derived=lambda t: {
        "task_id": t.task_id,
        "persona_id": t.persona_id,
        "day": t.day,
        "template": t.template,
        "flow": ">".join(t.interface_flow),
    },
)

GATED_WORLD_TASKS = RowCodec(
    GatedTask,
    embed="record",
    derived=lambda g: {
        "task_id": g.task.task_id,
        "persona_id": g.task.persona_id,
        "status": g.status,
        "difficulty": g.difficulty,
        "flow": ">".join(g.task.interface_flow),
        "reasons": to_json(g.reasons),
        "gates": to_json([x.model_dump(mode="json") for x in g.gates]),
    },
)

SELECTOR_DECISIONS = RowCodec(Decision)

#: accepted_tasks: the dataset rows (``seed_key`` is stored as ``task_seed_key``)
ACCEPTED_TASKS = RowCodec(AcceptedTask, renamed={"seed_key": "task_seed_key"})
