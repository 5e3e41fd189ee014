"""Content-sensitive offline solvers for terminal bundles (policy kind ``solver``).

A scripted agent whose success depends on what the task contains, not on a formula:

- **procedural bundles** (family provenance in task.toml): each episode the solver "knows" each of
  the family's edge cases with probability `skill` (and gives up with probability `give_up`), and
  submits the family's solution that handles exactly the known ones (`GeneratedTask.solution_missing`).
  The bundle's tests decide: the episode passes when the instance contains no edge case the solver
  misses. An instance without edge cases is solved by any attempt, one with all of them only by a
  solver that knows them all, so raising a knob (more edge cases) lowers the measured pass rate.
- **imported bundles** (no family): the solver runs the reference ``solution/solve.sh`` forgetting
  each top-level statement with probability ``(1 - skill) / 2`` (a forgotten statement becomes
  ``:``); a bundle whose solution needs many steps is harder than one that needs few.

The draws of episode i depend on (policy name, policy seed, family, i) only — never on the bundle —
so a seed and its rewrite are attempted with the same knowledge (common random numbers). Trials are
deterministic, so the reward of one (bundle, submitted solution) pair is executed once per policy
object and reused (``detail.reused``). With ``reuse="present"`` (benches over many rewrites) two
submissions to one procedural bundle that miss the same *present* edge cases share one execution:
by the family contract (tests/unit/test_family_contract.py) a solution's result on an instance
depends only on which of the instance's edge cases it misses.
"""

from __future__ import annotations

import hashlib
import random
import tempfile
from pathlib import Path
from typing import Any, Literal

from envpipeline.errors import ConfigError
from envpipeline.forge.variants import procedural_origin, write_solution
from envpipeline.policies.base import PolicyKind, RolloutRecord, RolloutTarget, TargetFamily, TerminalTarget
from envpipeline.policies.registry import PolicyConfig, register_policy_kind
from envpipeline.sandbox.base import Limits
from envpipeline.terminal.bundle import read_bundle
from envpipeline.terminal.families.base import GeneratedTask
from envpipeline.terminal.families.registry import get_family
from envpipeline.terminal.trial import run_trial
from envpipeline.terminal.verify import bundle_fingerprint

#: the name imported bundles use in the draw key (they have no family)
IMPORTED = "imported"


def regenerate(bundle_dir: Path) -> GeneratedTask | None:
    """The generated task a procedural bundle was written from (None for imported bundles)."""
    origin = procedural_origin(bundle_dir)
    if origin is None:
        return None
    family = get_family(origin["family"])
    preset = read_bundle(bundle_dir).config.metadata.difficulty
    preset = preset if preset in ("easy", "medium", "hard") else "medium"
    edge_cases = origin.get("edge_cases")
    return family.generate(int(origin["seed"]), family.knob_model(**origin["knobs"]), preset, edge_cases)


def forget_statements(script: str, rng: random.Random, forget: float) -> tuple[str, int, int]:
    """`script` with each top-level statement replaced by ``:`` with probability `forget`:
    (script, statements forgotten, statements). A script that does not parse is kept whole."""
    from envpipeline.terminal.shell_rewrite import top_level_statements  # needs the sandbox extra

    spans = top_level_statements(script)
    if not spans:
        return script, 0, 0
    source = script.encode()
    dropped = [span for span in spans if rng.random() < forget]
    for start, end in sorted(dropped, reverse=True):
        source = source[:start] + b":" + source[end:]
    return source.decode(errors="replace"), len(dropped), len(spans)


class ContentSensitiveSolver:
    """The ``solver`` policy kind (see the module docstring)."""

    kind: PolicyKind = "solver"
    families: frozenset[TargetFamily] = frozenset({"terminal"})

    def __init__(
        self,
        name: str = "solver-v1",
        skill: float = 0.7,
        give_up: float = 0.05,
        seed: int = 0,
        reuse: Literal["exact", "present"] = "exact",
    ) -> None:
        if not 0.0 <= skill <= 1.0 or not 0.0 <= give_up <= 1.0:
            raise ConfigError("skill and give_up must lie in [0, 1]")
        self.reuse = reuse
        self.name = name
        self.skill = skill
        self.give_up = give_up
        self.seed = seed
        self._rewards: dict[tuple[str, str], tuple[float, str, float]] = {}

    def _rng(self, family: str, index: int) -> random.Random:
        return random.Random(f"{self.name}:{self.seed}:{family}:{index}")

    def known_edge_cases(self, variants: tuple[str, ...], family: str, index: int) -> frozenset[str] | None:
        """The edge cases episode `index` handles, or None when it gives up (same draws for
        every bundle of the family)."""
        rng = self._rng(family, index)
        gives_up = rng.random() < self.give_up
        known = frozenset(v for v in variants if rng.random() < self.skill)
        return None if gives_up else known

    def rollout(self, target: RolloutTarget, index: int) -> RolloutRecord:
        """One episode: choose a submission from the task's content, run it, score it with its tests."""
        if not isinstance(target, TerminalTarget):
            raise ConfigError(f"the solver policy attempts terminal bundles only, not {target.family} tasks")
        task = regenerate(target.bundle_dir)
        with tempfile.TemporaryDirectory(prefix="envpipeline-solver-") as tmp:
            files, submission, detail = (
                self._procedural(task, index)
                if task is not None
                else self._imported(target.bundle_dir, index)
            )
            equivalent = submission
            if self.reuse == "present" and task is not None and files is not None:
                equivalent = "misses-present:" + ",".join(
                    sorted(set(detail["missed"]) & set(task.edge_cases))
                )
            reward, verdict, seconds, reused = self._score(target, files, submission, equivalent, Path(tmp))
        return RolloutRecord(
            task_id=target.key,
            family="terminal",
            policy=self.name,
            kind="solver",
            index=index,
            reward=reward,
            submission=submission,
            verdict=verdict,
            seconds=round(seconds, 4),
            detail={**detail, "skill": self.skill, "reused": reused},
        )

    def _procedural(
        self, task: GeneratedTask, index: int
    ) -> tuple[dict[str, str] | None, str, dict[str, Any]]:
        variants = tuple(sorted(set(task.solutions) - {"oracle"}))
        known = self.known_edge_cases(variants, task.family, index)
        detail: dict[str, Any] = {"family": task.family, "edge_cases": task.edge_cases}
        if known is None:
            return None, "nop", detail
        missed = sorted(set(variants) - known)
        detail["missed"] = missed
        return task.solution_missing(set(missed)), "missing:" + ",".join(missed) if missed else "all", detail

    def _imported(self, bundle_dir: Path, index: int) -> tuple[dict[str, str] | None, str, dict[str, Any]]:
        rng = self._rng(IMPORTED, index)
        if rng.random() < self.give_up:
            return None, "nop", {}
        script = bundle_dir / "solution" / "solve.sh"
        if not script.is_file():
            raise ConfigError(f"{bundle_dir} has no solution/solve.sh for the solver to work from")
        text, forgotten, statements = forget_statements(script.read_text(), rng, (1.0 - self.skill) / 2.0)
        files = {"solve.sh": text}
        for extra in (bundle_dir / "solution").rglob("*"):
            if extra.is_file() and extra.name != "solve.sh":
                files[extra.relative_to(bundle_dir / "solution").as_posix()] = extra.read_text(
                    errors="replace"
                )
        detail = {"statements": statements, "forgotten": forgotten}
        return files, f"forgot:{forgotten}/{statements}", detail

    def _score(
        self,
        target: TerminalTarget,
        files: dict[str, str] | None,
        submission: str,
        equivalent: str,
        tmp: Path,
    ) -> tuple[float, str, float, bool]:
        if equivalent == submission:
            equivalent = hashlib.sha256(repr(sorted((files or {}).items())).encode()).hexdigest()
        key = (bundle_fingerprint(target.bundle_dir), equivalent if files is not None else "nop")
        if key in self._rewards:
            reward, verdict, seconds = self._rewards[key]
            return reward, verdict, 0.0, True
        bundle = read_bundle(target.bundle_dir)
        solution = write_solution(files, tmp / "solution") if files is not None else None
        agent = "nop" if files is None else f"solver:{submission}"
        trial = run_trial(target.sandbox, bundle, agent, target.limits or Limits(), solution_dir=solution)
        reward = trial.reward if trial.reward is not None else 0.0
        seconds = trial.durations.get("total", 0.0)
        self._rewards[key] = (reward, trial.verdict, seconds)
        return reward, trial.verdict, seconds, False


@register_policy_kind("solver")
def _build(config: PolicyConfig) -> ContentSensitiveSolver:
    return ContentSensitiveSolver(
        name=config.name or "solver-v1",
        skill=config.skill,
        give_up=config.give_up,
        seed=config.seed,
    )
