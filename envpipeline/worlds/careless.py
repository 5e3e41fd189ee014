"""The careless-agent probe: a task's verifier must fail an attempt that slips once.

The mistake-free reference agent runs the task's own solution again with one slip (`Slip`):

- **miscopied**: one value the solution remembers (what a read step captures, a booking's
  confirmation, an order's number) is remembered wrong wherever it is stored (a digit shifted, else
  a letter dropped), so everything the agent writes from it is wrong;
- **mistyped**: one value is wrong in one step that uses it only (a typo in one of the writes:
  the agenda line right, the confirmation mail wrong);
- **confused**: one value is taken from the confusable record beside the right one (the read
  step's distractor: the product on the other line of the list, the other date), a plausible value
  the world holds, where a miscopied one is often no value at all;
- **skipped**: one step of the solution is left out.

A slipped run that still earns V = 1 while leaving a state other than the reference's is a hole:
the criteria do not pin that value (a confirmation mail with the wrong place, a file sent with its
last line changed, a booking from the wrong airport) or do not ask for that step, so a careless
agent is rewarded as a careful one. A slip that changes nothing (a value never written, a read the
hinted agent does not need) leaves the reference's state and is no hole.

Procedural templates are held to it by their contract test; an LLM-synthesized task by
`worlds.llm.task_checks` before it is gated (the problems go back to the model).
"""

from __future__ import annotations

import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from envpipeline.models.world_task import Step, WorldTask
from envpipeline.sandbox.base import Sandbox
from envpipeline.worlds.rollout_services import ServicePool, active_pool, sharing
from envpipeline.worlds.state import world_hash
from envpipeline.worlds.tasks import prepare_initial
from envpipeline.worlds.verifier import evaluate

if TYPE_CHECKING:
    from envpipeline.worlds.agents import Slip


@dataclass(frozen=True)
class SlippedRun:
    """One slipped run of the reference: what slipped, the verifier's verdict, whether it mattered."""

    slip: str
    verdict: int
    #: the run ended in the reference's exact state (the slip changed nothing the verifier sees)
    same_state: bool
    mistakes: tuple[str, ...]

    @property
    def hole(self) -> bool:
        """Rewarded though it left another state than the reference: the verifier missed the slip."""
        return bool(self.verdict) and not self.same_state


def _stored_by(step: Step) -> list[str]:
    """The names one step stores values under (read captures, a confirmation, a message id)."""
    stored = [*step.args.get("vars", []), step.args.get("var"), step.args.get("id_var")]
    return [name for name in stored if isinstance(name, str) and name]


def remembered_values(task: WorldTask) -> list[str]:
    """The names the task's solution stores values under, in the order its steps store them."""
    names: list[str] = []
    for step in task.solution:
        names += [name for name in _stored_by(step) if name not in names]
    return names


def used_values(task: WorldTask) -> list[tuple[int, str]]:
    """(step, name) for each remembered value a step uses after an earlier step stored it: in a
    written template (``{date}``) or named as the record to act on (``id_var``, ``order``)."""
    stored: list[str] = []
    pairs = []
    for number, step in enumerate(task.solution):
        texts = [
            value
            for key, value in step.args.items()
            if isinstance(value, str) and key not in ("vars", "distractors", "pattern")
        ]
        pairs += [
            (number, name)
            for name in stored
            if any("{" + name + "}" in text or text == name for text in texts)
        ]
        stored += [name for name in _stored_by(step) if name not in stored]
    return pairs


def slips_of(task: WorldTask) -> list[tuple[str, Slip]]:
    """Every slip the probe tries on `task`, with its label."""
    from envpipeline.worlds.agents import Slip  # the HTTP and MCP clients: load late

    slips = [(f"miscopied {name}", Slip(miscopy=name)) for name in remembered_values(task)]
    confusable = [
        n for step in task.solution for n in step.args.get("distractors", {}) if n in _stored_by(step)
    ]
    slips += [(f"confused {name}", Slip(confuse=name)) for name in dict.fromkeys(confusable)]
    slips += [
        (f"mistyped {name} in step {i} ({task.solution[i].action})", Slip(mistype=(i, name)))
        for i, name in used_values(task)
    ]
    slips += [
        (f"skipped step {i} ({step.action})", Slip(skip_step=i)) for i, step in enumerate(task.solution)
    ]
    return slips


def slipped_runs(task: WorldTask, w0: Path, sandbox: Sandbox | None = None) -> list[SlippedRun]:
    """The reference once per slip (`slips_of`), each on a fresh copy of `w0`, judged by the task's
    verifier against the clean reference's final state. Rollouts share the interfaces of the active
    `rollout_services` pool, or of one opened for the probe."""
    with ExitStack() as stack:
        _share_pool(stack, sandbox)
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="wildawm-careless-")))
        reference = work / "reference" / w0.name
        clean = world_hash(_attempt(task, w0, reference, sandbox, None)[0])
        runs = []
        for label, slip in slips_of(task):
            final, verdict, mistakes = _attempt(task, w0, work / "slipped" / w0.name, sandbox, slip)
            runs.append(SlippedRun(label, verdict, world_hash(final) == clean, mistakes))
        return runs


def _share_pool(stack: ExitStack, sandbox: Sandbox | None) -> None:
    """Rollouts inside `stack` share the active pool of interfaces, or one opened for them."""
    shared = active_pool()
    if shared is None or not shared.serves(sandbox):
        stack.enter_context(sharing(stack.enter_context(ServicePool(sandbox))))


def _attempt(
    task: WorldTask, w0: Path, final: Path, sandbox: Sandbox | None, slip: Slip | None
) -> tuple[Path, int, tuple[str, ...]]:
    """The mistake-free hinted agent (with `slip`) on a fresh copy of `w0` at `final`: the folder,
    the verifier's verdict and the agent's mistakes."""
    from envpipeline.worlds.agents import ScriptedAgent

    if final.parent.exists():
        shutil.rmtree(final.parent)
    shutil.copytree(w0, final)
    agent = ScriptedAgent("expert", hinted=True, seed="careless", error_rate=0.0, slip=slip)
    result = agent.run(task, final, sandbox)
    return final, evaluate(task, w0, final, result.trajectory).verdict, tuple(result.mistakes)


def careless_problems(task: WorldTask, w0: Path, sandbox: Sandbox | None = None) -> list[str]:
    """Each slip the verifier rewards, in words (empty: every slip that mattered failed)."""
    return [
        f"an agent that {run.slip} still passes every criterion: the criteria must pin "
        + ("that step's effect" if run.slip.startswith("skipped") else "that value")
        for run in slipped_runs(task, w0, sandbox)
        if run.hole
    ]


@dataclass(frozen=True)
class CarelessAudit:
    """The probe over accepted tasks, one per template: what was tried and the holes found."""

    templates: tuple[str, ...]
    slips: int
    changed: int
    #: (task id, template, slip) of every slip the verifier rewarded
    holes: tuple[tuple[str, str, str], ...]


def careless_audit(
    tasks: list[tuple[WorldTask, Path]], sandbox: Sandbox | None = None, workers: int = 3
) -> CarelessAudit:
    """`slipped_runs` on the first task (by id) of each template among `tasks` (each with the world
    day folder it was made on; its W0 is rebuilt there, setup applied): what a pipeline checks of its
    accepted tasks without probing every one of them. `workers` templates are probed at once (their
    rollouts wait on servers and shells: about half of a probe's wall time), through one pool of
    interfaces; the result does not depend on it."""
    first: dict[str, tuple[WorldTask, Path]] = {}
    for task, day_dir in sorted(tasks, key=lambda pair: pair[0].task_id):
        first.setdefault(task.template, (task, day_dir))
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="wildawm-careless-audit-")))
        _share_pool(stack, sandbox)

        def probe(item: tuple[str, tuple[WorldTask, Path]]) -> list[SlippedRun]:
            task, day_dir = item[1]
            w0 = prepare_initial(task, day_dir, tmp / task.task_id / Path(day_dir).name)
            return slipped_runs(task, w0, sandbox)

        with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="careless") as pool:
            probed = list(pool.map(probe, sorted(first.items())))
    runs = [
        (first[template][0].task_id, template, run)
        for (template, _), some in zip(sorted(first.items()), probed)
        for run in some
    ]
    return CarelessAudit(
        tuple(sorted(first)),
        len(runs),
        sum(not run.same_state for _, _, run in runs),
        tuple((task_id, template, run.slip) for task_id, template, run in runs if run.hole),
    )
