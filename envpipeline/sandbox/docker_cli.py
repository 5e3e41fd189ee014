"""The docker CLI as this project calls it: a minimal environment, a timeout, one error type."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence

from envpipeline.errors import SandboxError

#: Host variables the docker CLI itself may see (never forwarded into containers).
CLI_ENV_KEYS = (
    "PATH",
    "HOME",
    "DOCKER_HOST",
    "DOCKER_CONFIG",
    "DOCKER_CONTEXT",
    "DOCKER_CERT_PATH",
    "DOCKER_TLS_VERIFY",
)


def cli_env() -> dict[str, str]:
    """A minimal environment for the docker CLI; the classic builder (no buildx on our hosts)."""
    env = {k: os.environ[k] for k in CLI_ENV_KEYS if k in os.environ}
    env.setdefault("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
    env["DOCKER_BUILDKIT"] = "0"
    return env


def docker(
    args: Sequence[str], timeout: float = 60.0, check: bool = True
) -> subprocess.CompletedProcess[bytes]:
    """Run ``docker <args>`` (no shell) and return its output; SandboxError on failure."""
    try:
        done = subprocess.run(
            ["docker", *args], capture_output=True, timeout=timeout, env=cli_env(), stdin=subprocess.DEVNULL
        )
    except FileNotFoundError as e:
        raise SandboxError("the docker CLI is not installed") from e
    except subprocess.TimeoutExpired as e:
        raise SandboxError(f"docker {args[0]} did not answer within {timeout:.0f} s") from e
    if check and done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip()[-2000:]
        raise SandboxError(f"docker {args[0]} failed ({done.returncode}): {message}")
    return done
