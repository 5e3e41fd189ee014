"""verifiers 0.4 adapter: a taskset whose rewards read the live environment (``verifiers.v1``).

verifiers 0.4 replaced ``Environment``/``Rubric`` (≤ 0.3) with ``verifiers.v1``: a `Taskset`
yields `Task`s; a task's tools are MCP `Toolset` servers launched per rollout, which share a typed
rollout `State` with the host (pulled before and pushed after every tool call); ``@vf.reward``
methods of the task score each trace after the rollout (``verifiers/v1/task.py``,
``taskset.py``, ``mcp/server.py``, ``state.py``, ``utils/loaders.py`` of verifiers 0.4.0).

Here:

- `EnvpipelineTaskset` (exported by the top-level ``envpipeline_verifiers`` package, so
  ``--env.taskset.id envpipeline-verifiers`` loads it) reads our TRL/verifiers RL rows
  (``trl-rl/*.parquet`` or ``.jsonl``, ``data_files`` in its config) into `EnvpipelineTask`s
  carrying each row's ``env_spec`` and rubric;
- `EnvpipelineToolset` builds the live episode in ``setup_task`` and exposes its tools (the
  composed meta-tools and ``submit_answer``); after every call it writes the episode's evidence
  (`episode_evidence`: criteria passes from the live state and answer) into the rollout `State`;
- `EnvpipelineTask.task_reward` (async, as ``Task.score`` gathers its hooks) scores the trace from that evidence (`score_completion`): criteria
  as the environment reported them, text criteria from the submitted answer or the last reply.
  No evidence (no tool was called) is scored text-only.

Groups: verifiers 0.4 scores each trace on its own (``Task.score``); the rollout group is the
trainer's (``--num-rollouts`` / prime-rl), and no verifiers hook receives a group's traces. The
reward is therefore the per-trace checklist (``reward_mode: binary`` for all-or-nothing), never a
silent CFRR group of one; CFRR group scoring stays in `envpipeline.export.rewards.score_group`
for trainers that pass groups. Composed tasks only: world tool sets are dynamic per task and
verifiers' ``@vf.tool`` methods are static (see docs/trainers/verifiers.md).

Importing this module needs no verifiers; the classes are built on first access.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from envpipeline.errors import ConfigError
from envpipeline.models.env_spec import EnvSpec
from envpipeline.trainers.adapter_common import episode_evidence, score_completion
from envpipeline.trainers.episode import Episode, build_episode

MODULE = "envpipeline.trainers.verifiers_env"  # also when verifiers runs the toolset as __main__
SUPPORTED_FAMILIES = ("compose",)


def read_rows(paths: Sequence[str | Path]) -> Iterator[dict[str, Any]]:
    """The rows of our TRL/verifiers RL files (Parquet or JSON lines), in order."""
    import pyarrow.parquet as pq

    for path in map(Path, paths):
        if not path.exists():
            raise ConfigError(f"verifiers taskset data file {path} does not exist")
        if path.suffix == ".jsonl":
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    yield json.loads(line)
        else:
            yield from pq.read_table(path).to_pylist()


def task_fields(row: dict[str, Any]) -> dict[str, Any]:
    """`EnvpipelineTaskData` fields of one row (system prompt, instruction, spec, rubric)."""
    if not row.get("env_spec"):
        raise ConfigError(f"row {row.get('task_id')!r} has no env_spec column: re-export with this version")
    messages = row.get("prompt") or []
    system = next((m["content"] for m in messages if m.get("role") == "system"), None)
    user = "\n\n".join(m["content"] for m in messages if m.get("role") == "user")
    return {
        "id": row["task_id"],
        "name": row["task_id"],
        "prompt": user,
        "system_prompt": system,
        "env_spec": row["env_spec"],
        "rubric": row["answer"],
        "family": row.get("family") or "",
    }


def _build_classes() -> dict[str, type]:
    try:
        import verifiers.v1 as vf  # pyright: ignore[reportMissingImports]
    except ImportError as e:  # pragma: no cover - depends on the trainer's environment
        raise ImportError(
            "envpipeline.trainers.verifiers_env needs verifiers>=0.4: pip install verifiers (docs/trainers/verifiers.md)"
        ) from e

    class EnvpipelineTaskData(vf.TaskData):
        """One of our RL rows: the instruction plus the spec and rubric the environment needs."""

        env_spec: str
        rubric: str
        family: str = ""

    class EnvpipelineState(vf.State):
        """Rollout state shared by the toolset and the host: what the environment saw."""

        evidence: dict[str, Any] = {}

    class EnvpipelineToolset(vf.Toolset[vf.ToolsetConfig, EnvpipelineState]):
        """A composed task's meta-tools and ``submit_answer`` over one live episode per rollout."""

        TOOL_PREFIX = None  # the episode's own tool names, unprefixed

        def __init__(self, config: Any) -> None:
            super().__init__(config)
            self.episode: Episode | None = None

        async def setup_task(self, task: Any) -> None:
            spec = EnvSpec.model_validate_json(task.data.env_spec)
            if spec.family not in SUPPORTED_FAMILIES:
                raise ConfigError(
                    f"the verifiers adapter runs {SUPPORTED_FAMILIES} tasks, not {spec.family!r}"
                )
            self.episode = build_episode(spec)

        def _run(self, tool: str, arguments: dict[str, Any]) -> str:
            if self.episode is None:
                raise ConfigError("the toolset has no task: verifiers calls setup_task first")
            observation = self.episode.call(tool, arguments)
            self.state.evidence = episode_evidence(self.episode)
            return observation

        @vf.tool
        def list_services(self) -> str:
            """List the services available in this environment."""
            return self._run("list_services", {})

        @vf.tool
        def list_tools(self, service: str) -> str:
            """List the tools of one service with a one-line description each."""
            return self._run("list_tools", {"service": service})

        @vf.tool
        def describe_tool(self, tool: str) -> str:
            """Show the argument schema of one tool, e.g. calendar.update_event."""
            return self._run("describe_tool", {"tool": tool})

        @vf.tool
        def call_tool(self, tool: str, arguments: dict[str, Any]) -> str:
            """Call one tool with arguments matching its schema."""
            return self._run("call_tool", {"tool": tool, "arguments": arguments})

        @vf.tool
        def submit_answer(self, answer: str) -> str:
            """Submit your final answer when the task is done (the last submission counts)."""
            return self._run("submit_answer", {"answer": answer})

    class EnvpipelineTaskConfig(vf.TaskConfig):
        """``reward_mode``: ``checklist`` (share of criteria, default) or ``binary``."""

        reward_mode: str = "checklist"

    class EnvpipelineTask(vf.Task[EnvpipelineTaskData, EnvpipelineState, EnvpipelineTaskConfig]):
        """One row's task: tools from `EnvpipelineToolset`, reward from the environment's evidence."""

        @classmethod
        def toolsets(cls, config: Any) -> list[Any]:
            return [EnvpipelineToolset(vf.ToolsetConfig())]

        def scored(self, trace: Any) -> dict[str, Any]:
            """`score_completion` of a trace: its state's evidence and its last reply."""
            evidence = getattr(trace.state, "evidence", None) or None
            mode = self.config.reward_mode
            return score_completion(self.data.rubric, trace.last_reply, evidence, mode)  # pyright: ignore[reportArgumentType]

        @vf.reward
        async def task_reward(self, trace: Any) -> float:
            """The task's reward from the live environment (text-only when no tool was called)."""
            return float(self.scored(trace)["score"])

        @vf.metric
        async def task_checks(self, trace: Any) -> dict[str, float]:
            """Full pass, criteria passed, and whether the environment was seen (1) or text only (0)."""
            result = self.scored(trace)
            return {
                "full_pass": result["full_pass"],
                "criteria_passed": result["criteria_passed"],
                "environment_seen": float(result["source"] == "environment"),
            }

    class EnvpipelineTasksetConfig(vf.TasksetConfig):
        """``data_files``: our exported ``trl-rl`` Parquet / JSON-lines files."""

        data_files: list[str] = []
        task: EnvpipelineTaskConfig = EnvpipelineTaskConfig()

    class EnvpipelineTaskset(vf.Taskset[EnvpipelineTask, EnvpipelineTasksetConfig]):
        """Our RL rows as verifiers tasks (see the module docstring)."""

        def load(self) -> Iterator[EnvpipelineTask]:
            for row in read_rows(self.config.data_files):
                yield EnvpipelineTask(EnvpipelineTaskData(**task_fields(row)), self.config.task)

    built: dict[str, type] = {}
    for cls in (
        EnvpipelineTaskData,
        EnvpipelineState,
        EnvpipelineToolset,
        EnvpipelineTaskConfig,
        EnvpipelineTask,
        EnvpipelineTasksetConfig,
        EnvpipelineTaskset,
    ):
        # verifiers ships classes across processes by "module:qualname" (mcp/server.py _import_ref)
        cls.__module__, cls.__qualname__ = MODULE, cls.__name__
        built[cls.__name__] = cls
    return built


_CLASSES: dict[str, type] = {}
CLASS_NAMES = (
    "EnvpipelineTaskData",
    "EnvpipelineState",
    "EnvpipelineToolset",
    "EnvpipelineTaskConfig",
    "EnvpipelineTask",
    "EnvpipelineTasksetConfig",
    "EnvpipelineTaskset",
)


def __getattr__(name: str) -> Any:
    """The verifiers classes, built (importing verifiers) on first access, e.g. by its taskset loader."""
    if name in CLASS_NAMES:
        if not _CLASSES:
            _CLASSES.update(_build_classes())
        return _CLASSES[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":  # verifiers starts a toolset server as `python -m <its module>` (mcp/launch.py)
    __getattr__("EnvpipelineToolset").run()
