"""Read-only probes whose output must arrive whole: an end marker proves nothing was lost.

Docker's exec streams can lose the output of a short command under load: the engine reports exit
status 0 and stdout is empty (moby/moby#27289, docker/docker-py#2042; measured here about once in
200 reads on a loaded 2-core machine). A probe the gates trust (the sandbox clock, the runtime
guard's and the tamper check's listings, a reward file) must never pass for empty when its output
was lost: an empty listing would wave a planted file through. `checked_exec` runs the script and
then prints a random end marker; the marker is stripped from the output, and a run whose marker
did not arrive is run again (a probe only reads, so running it again is safe). After
`OUTPUT_TRIES` losses it raises `SandboxError`, so the trial ends ``sandbox_error`` instead of a
wrong verdict.
"""

from __future__ import annotations

import secrets

from envpipeline.errors import SandboxError
from envpipeline.sandbox.base import ExecResult, SandboxSession

#: Runs of a probe whose output was lost before `checked_exec` gives up.
OUTPUT_TRIES = 3


def end_marker() -> str:
    """A fresh marker no probe output can contain by chance (letters, digits and underscores)."""
    return f"ENVPIPELINE_END_{secrets.token_hex(8)}"


def with_end_marker(script: str, marker: str) -> str:
    """`script` in a subshell (an ``exit`` inside it ends only the subshell), then `marker` on
    stdout, exiting with the script's status."""
    return f"(\n{script}\n); status=$?; printf '%s' {marker}; exit $status"


def checked_exec(session: SandboxSession, script: str, timeout_sec: float, workdir: str = "/") -> ExecResult:
    """`session.exec` of a read-only `script` whose stdout arrives whole (see the module docstring).

    A run that timed out or outgrew the output cap is returned as it is (its marker cannot be
    expected); the caller reads those flags as it would for any exec.
    """
    statuses = []
    for _ in range(OUTPUT_TRIES):
        marker = end_marker()
        result = session.exec(with_end_marker(script, marker), timeout_sec=timeout_sec, workdir=workdir)
        if result.timed_out or result.truncated:
            return result
        if result.stdout.endswith(marker):
            return result.model_copy(update={"stdout": result.stdout[: -len(marker)]})
        statuses.append(result.exit_code)
    raise SandboxError(
        f"the output of a sandbox probe was lost {OUTPUT_TRIES} times in a row (exit statuses "
        f"{statuses}, no end marker): {script[:80]!r}"
    )
