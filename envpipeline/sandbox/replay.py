"""Replaying ``environment/Dockerfile`` in a local session (see `envpipeline.sandbox.dockerfile`).

FROM is recorded (the session already runs on the base image's tree), ENV/ARG set variables
starting from the image's ENV (so ``ENV PATH="/x:${PATH}"`` keeps ``/usr/bin``), RUN steps start
in the image's WORKDIR, WORKDIR creates a folder under ``/app``, COPY/ADD unpack
their sources into ``/app`` as the sandbox user (from the host when that is provably safe, see
`envpipeline.sandbox.hostio`), RUN executes inside the sandbox under the session limits without
network, and LABEL/EXPOSE/CMD/ENTRYPOINT/USER... are recorded and skipped.
"""

from __future__ import annotations

import tempfile
import time
from typing import IO, Protocol

from envpipeline.errors import SandboxError
from envpipeline.models.bundle import Bundle
from envpipeline.sandbox import dockerfile as df
from envpipeline.sandbox.base import ExecResult

#: Sandbox paths the Dockerfile may COPY to or WORKDIR into.
BUILD_ROOTS = ("/app",)


class BuildSession(Protocol):
    """What a replay needs from a session (`envpipeline.sandbox.local.LocalSession` is one)."""

    #: variables of later steps: the image's ENV, then the Dockerfile's; ARG values join them for
    #: RUN steps only
    env: dict[str, str]
    #: the image's WORKDIR, where RUN steps start until the Dockerfile's WORKDIR
    workdir: str
    #: the image named by FROM (recorded; the local sandbox runs on the base image's tree)
    base_image: str | None
    #: (line, keyword) of every instruction that was recorded and skipped
    ignored: list[tuple[int, str]]

    def exec(self, command: str, timeout_sec: float, workdir: str = "/app") -> ExecResult:
        """Run a bash command inside the sandbox."""
        ...

    def extract(self, archive: IO[bytes], directory: str) -> None:
        """Unpack a tar archive into a sandbox folder as the sandbox user."""
        ...

    def makedirs(self, directory: str) -> None:
        """Create a sandbox folder (and its parents) as the sandbox user."""
        ...


def replay(session: BuildSession, bundle: Bundle, instructions: list[df.Instruction], budget: float) -> None:
    """Replay the supported instructions in order inside the session (`budget`: build seconds)."""
    deadline = time.monotonic() + budget
    workdir = session.workdir
    args: dict[str, str] = {}
    froms = [i for i in instructions if i.keyword == "FROM"]
    if not froms or instructions[0].keyword not in ("FROM", "ARG"):
        raise df.build_error(
            instructions[0].line if instructions else 1, "the Dockerfile must start with FROM"
        )
    if len(froms) > 1:
        raise df.build_error(froms[1].line, "multi-stage builds are not supported locally")
    for step in instructions:
        variables = {**args, **session.env}
        if step.keyword not in df.SUPPORTED | df.IGNORED:
            raise df.build_error(step.line, f"{step.keyword} is not supported by the local sandbox")
        if step.keyword == "ARG":
            name, _, default = step.value.partition("=")
            args[name.strip()] = df.expand(default.strip().strip('"'), variables)
        if step.keyword in df.IGNORED:
            session.ignored.append((step.line, step.keyword))
        elif step.keyword == "FROM":
            words = [word for word in step.value.split() if not word.startswith("--")]
            session.base_image = df.expand(words[0], variables) if words else None
        elif step.keyword == "ENV":
            session.env.update(df.parse_env(step.value, step.line, variables))
        elif step.keyword == "WORKDIR":
            workdir = df.resolve_dir(df.expand(step.value, variables), workdir, step.line, BUILD_ROOTS)
            try:
                session.makedirs(workdir)
            except SandboxError as e:
                raise df.build_error(step.line, f"WORKDIR {workdir}: {e}") from e
        elif step.keyword in ("COPY", "ADD"):
            with tempfile.TemporaryFile() as archive:
                target = df.pack_copy(
                    step, bundle.paths.environment, workdir, variables, archive, BUILD_ROOTS
                )
                try:
                    session.extract(archive, target)
                except SandboxError as e:
                    raise df.build_error(step.line, str(e)) from e
        else:
            run_step(session, step, workdir, deadline, args)


def run_step(
    session: BuildSession, step: df.Instruction, workdir: str, deadline: float, args: dict[str, str]
) -> None:
    """One RUN inside the sandbox under the session limits and the remaining build time.

    As in Docker, ARG values are environment variables of RUN steps only (ENV wins over them).
    """
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise df.build_error(step.line, "the build timeout was reached")
    saved, session.env = session.env, {**args, **session.env}
    try:
        result = session.exec(df.run_command(step.value, step.line), remaining, workdir=workdir)
    finally:
        session.env = saved
    if result.timed_out:
        raise df.build_error(step.line, f"RUN exceeded the build timeout ({remaining:.0f} s left)")
    if result.exit_code != 0:
        tail = (result.stdout + result.stderr).strip()[-2000:]
        if df.NETWORK_RUN.search(step.value):
            raise df.build_error(
                step.line,
                f"RUN failed with exit code {result.exit_code}: this step downloads, and the local "
                "sandbox builds without network; verify with --sandbox docker, whose builds reach "
                f"the package registries: {tail}",
            )
        raise df.build_error(
            step.line, f"RUN failed with exit code {result.exit_code} (no network here): {tail}"
        )
