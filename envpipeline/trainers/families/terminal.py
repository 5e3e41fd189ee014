"""Terminal (Envs-FORGE / Harbor bundle) episodes: a shell in a sandbox session of the bundle.

The bundle comes from the spec's reference (``environment.bundle_path``, relative paths under
`bundle_root`); the session is opened as verification opens it (base images resolved, the
bundle's limits capped at the operator's ceiling unless `limits` are given, `select_sandbox`: the
local backend by default) on the first call. The one tool is ``exec`` (a bash command in ``/app``,
run for at most `max_command_sec`; the observation is ``exit=<code>`` then stdout and stderr). The reward runs the bundle's verifier exactly as
verification does (`envpipeline.terminal.trial.verify_after_agent`: processes killed, ``/tests``
uploaded fresh and read-only, ``test.sh`` run, the reward file parsed, tampering scored 0); it is
computed once, after which the episode is over. ``binary`` is 1.0 only for a reward of 1;
``checklist`` is the verifier's reward itself (a fraction where the tests give partial credit).
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

from envpipeline.errors import ConfigError
from envpipeline.models.bundle import Bundle
from envpipeline.models.env_spec import EnvSpec
from envpipeline.sandbox.base import Limits, Sandbox, SandboxSession
from envpipeline.services.base import BAD_REQUEST, CONFLICT
from envpipeline.terminal.trial import TrialResult
from envpipeline.trainers.episode import Episode, error_text, register_episode

EXEC_TOOL = "exec"
#: Longest a single command may run, in seconds (the bundle's agent timeout caps it further).
MAX_COMMAND_SEC = 120.0
#: Output kept per observation.
OUTPUT_CHARS = 8000
EXEC_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": EXEC_TOOL,
        "description": "Run one bash command in the task's Linux container (working directory /app).",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "the bash command"}},
            "required": ["command"],
            "additionalProperties": False,
        },
    },
}


def load_bundle(spec: EnvSpec, sandbox: Sandbox, bundle_root: Path | str | None = None) -> Bundle:
    """The spec's bundle with its base images resolved for `sandbox` (ConfigError when it cannot run)."""
    from envpipeline.terminal.bundle import read_bundle
    from envpipeline.terminal.images import resolve_bundle_images

    path = Path(spec.environment["bundle_path"])
    if not path.is_absolute() and bundle_root is not None:
        path = Path(bundle_root) / path
    bundle = read_bundle(path)
    images = resolve_bundle_images(bundle, provided=sandbox.provides_image)
    if images.needs_image():
        problems = "; ".join(flag.message for flag in images.needs_image_flags())
        raise ConfigError(f"terminal task {spec.task_id}: {problems}")
    return dataclasses.replace(bundle, dockerfile_text=images.dockerfile_text)


@register_episode("terminal")
class TerminalEpisode(Episode):
    """A bundle's container behind one ``exec`` tool; scored by the bundle's own tests."""

    def __init__(
        self,
        spec: EnvSpec,
        sandbox: Sandbox | None = None,
        bundle_root: Path | str | None = None,
        limits: Limits | None = None,
        **_options: Any,
    ) -> None:
        from envpipeline.sandbox.detect import select_sandbox

        super().__init__(spec)
        self.sandbox = sandbox or select_sandbox()
        self.bundle = load_bundle(spec, self.sandbox, bundle_root)
        self.limits = limits
        #: longest one command may run (a policy with a wall-clock limit lowers it as time runs out)
        self.max_command_sec = MAX_COMMAND_SEC
        self.session: SandboxSession | None = None
        self.result: TrialResult | None = None
        self._before: list[str] = []
        self._since = ""
        self._started = time.perf_counter()

    def _open(self) -> SandboxSession:
        from envpipeline.sandbox.ceiling import clamp_limits
        from envpipeline.terminal.runtime_guard import session_clock
        from envpipeline.terminal.trial import planted_files

        if self.session is None:
            limits = self.limits or clamp_limits(self.bundle.config)[0]
            self.session = self.sandbox.open(self.bundle, limits)
            self._before = planted_files(self.session)
            self._since = session_clock(self.session)
        return self.session

    def agent_tools(self) -> dict[str, dict[str, Any]]:
        return {EXEC_TOOL: EXEC_SCHEMA}

    def run_tool(self, tool: str, arguments: dict[str, Any]) -> str:
        command = arguments.get("command")
        if not isinstance(command, str) or not command.strip():
            return error_text(BAD_REQUEST, "exec needs 'command' as a non-empty string")
        if self.result is not None:
            return error_text(CONFLICT, "the episode is over: its tests have run")
        timeout = min(self.max_command_sec, self.bundle.config.agent.timeout_sec)
        result = self._open().exec(command, timeout_sec=timeout)
        suffix = "\n(timed out)" if result.timed_out else ""
        return f"exit={result.exit_code}\n{result.stdout}{result.stderr}"[:OUTPUT_CHARS] + suffix

    def verify(self) -> TrialResult:
        """Run the bundle's tests on the session (once; later calls return the same result)."""
        from envpipeline.terminal.trial import verify_after_agent

        if self.result is None:
            session = self._open()
            self.result = verify_after_agent(
                session, self.sandbox.backend, self.bundle, "policy", self._before, self._since, self._started
            )
        return self.result

    def tests_reward(self) -> float:
        """The verifier's reward in [0, 1]; 0 for a missing or malformed reward or tampering."""
        reward = self.verify().reward
        return float(reward) if reward is not None else 0.0

    def criteria_passed(self) -> list[bool]:
        passed = self.tests_reward() >= 1.0
        return [passed for _ in self.spec.criteria] or [passed]

    def checklist_score(self) -> float:
        return self.tests_reward()

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None
