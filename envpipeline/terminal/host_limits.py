"""What a trial may ask of this host: a bundle's limits checked before any session opens.

A ``task.toml`` sets ``cpus``, ``memory_mb`` and its timeouts; `limit_problem` refuses a trial
whose limits this host cannot give -- more CPUs than it has on Docker (``docker run --cpus``
fails; the engine is assumed to run on this host, as ``DOCKER_HOST`` is not consulted),
more memory than it has (``--memory 9223372036854775807m`` fails; a local rlimit that large is no
limit), or a timeout that is not a finite number of seconds (``timeout_sec = inf`` parses as a
float above 0) -- so the trial's verdict is ``limit_exceeded`` with the reason instead of an
exception from the backend.
"""

from __future__ import annotations

import math
import os

from envpipeline.models.bundle import Bundle
from envpipeline.sandbox.base import Limits


def host_cpus() -> int:
    """CPUs this process may use (what a session's ``cpus`` cannot exceed)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def host_memory_mb() -> int:
    """Physical memory of this host in MB (what a session's ``memory_mb`` cannot exceed)."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)


def limit_problem(bundle: Bundle, limits: Limits, backend: str) -> str:
    """Why a trial of `bundle` under `limits` cannot run on this host ("" when it can): more
    memory than the host has (Docker refuses it, and a local rlimit that large is no limit), more
    CPUs than it has on Docker (the local backend does not pin CPUs, so there ``cpus`` is not a
    promise it could break), or a timeout that is not a finite number of seconds."""
    problems = []
    if backend == "docker" and limits.cpus > host_cpus():
        problems.append(f"cpus = {limits.cpus:g} is more than this host's {host_cpus()} CPUs")
    if limits.memory_mb > host_memory_mb():
        problems.append(f"memory_mb = {limits.memory_mb} is more than this host's {host_memory_mb()} MB")
    for name, seconds in (
        ("agent.timeout_sec", bundle.config.agent.timeout_sec),
        ("verifier.timeout_sec", bundle.config.verifier.timeout_sec),
        ("environment.build_timeout_sec", bundle.config.environment.build_timeout_sec),
    ):
        if not math.isfinite(seconds):
            problems.append(f"{name} = {seconds} is not a finite number of seconds")
    return "; ".join(problems)
