"""A `RolloutTarget` as a live trainer `Episode`: the `EnvSpec` of each target kind, then its episode.

- composed: the record's own spec (`env_spec_of`);
- terminal: the bundle folder's record (`terminal_task_record`), under the target's task id; the
  episode runs in the target's sandbox, with the target's limits when given;
- world: the task's W0 (the day folder plus the task's setup operations) inlined as the spec's
  snapshot, so the episode needs no worlds folder; its shell runs in the target's sandbox.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from envpipeline.errors import ConfigError
from envpipeline.models.env_spec import EnvSpec, env_spec_of
from envpipeline.policies.base import ComposedTarget, RolloutTarget, TerminalTarget, WorldTarget
from envpipeline.scratch import scratch_folder

if TYPE_CHECKING:
    from envpipeline.trainers.episode import Episode
    from envpipeline.worlds.tasks import WorldTask


def terminal_spec(target: TerminalTarget) -> EnvSpec:
    """The spec of a bundle folder (its verifier is the one criterion)."""
    from envpipeline.terminal.records import terminal_task_record

    spec = env_spec_of(terminal_task_record(target.bundle_dir))
    return spec.model_copy(update={"task_id": target.key})


def world_spec(task: WorldTask, day_dir: Path) -> EnvSpec:
    """The spec of a world task with its W0 (day folder + setup operations) inlined."""
    from envpipeline.models.task import WorldEnvironmentRef
    from envpipeline.trainers.families.world import world_snapshot
    from envpipeline.worlds.tasks import prepare_initial

    if not (Path(day_dir) / "apps").is_dir():
        raise ConfigError(f"world task {task.task_id}: {day_dir} is not a world day folder (no apps/)")
    environment = WorldEnvironmentRef(
        persona_id=task.persona_id,
        day=task.day,
        template=task.template,
        interface_flow=list(task.interface_flow),
        hints=list(task.hints),
        checklist=[item.model_dump(mode="json") for item in task.checklist],
    )
    with scratch_folder("envpipeline-policy-w0-") as work:
        snapshot = world_snapshot(prepare_initial(task, day_dir, Path(work) / "day"))
    return EnvSpec(
        family="world",
        task_id=task.task_id,
        instruction=task.instruction,
        environment=environment.model_dump(mode="json"),
        criteria=[c.model_dump(mode="json") for c in task.criteria],
        world_snapshot=snapshot,
    )


def target_spec(target: RolloutTarget) -> EnvSpec:
    """The `EnvSpec` of any target kind (ConfigError for anything else)."""
    if isinstance(target, ComposedTarget):
        return env_spec_of(target.task)
    if isinstance(target, TerminalTarget):
        return terminal_spec(target)
    if isinstance(target, WorldTarget):
        return world_spec(target.task, target.day_dir)
    raise ConfigError(f"not a rollout target: {type(target).__name__}")


def open_episode(target: RolloutTarget) -> Episode:
    """The live episode of `target`, built by its family's episode plug-in (the caller closes it)."""
    from envpipeline.trainers.episode import build_episode

    spec = target_spec(target)
    if isinstance(target, TerminalTarget):
        return build_episode(spec, sandbox=target.sandbox, limits=target.limits)
    if isinstance(target, WorldTarget):
        return build_episode(spec, sandbox=target.sandbox)
    return build_episode(spec)
