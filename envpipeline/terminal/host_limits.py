"""What a trial may ask of this host: a bundle's limits capped and checked before any session opens.

`within_ceiling` caps the bundle's phase timeouts at the operator's ceiling
(`envpipeline.sandbox.ceiling`; ``timeout_sec = inf`` becomes the ceiling, with a note); limits
derived from ``task.toml`` are capped by `ceiling.clamp_limits` the same way. What is left for
`limit_problem` are limits a caller passed explicitly past this host.

A ``task.toml`` sets ``cpus``, ``memory_mb`` and its timeouts; `limit_problem` refuses a trial
whose limits this host cannot give -- more CPUs than it has on Docker (``docker run --cpus``
fails; the engine is assumed to run on this host, as ``DOCKER_HOST`` is not consulted),
more memory than it has (``--memory 9223372036854775807m`` fails; a local rlimit that large is no
limit), or a timeout that is not a finite number of seconds (``timeout_sec = inf`` parses as a
float above 0) -- so the trial's verdict is ``limit_exceeded`` with the reason instead of an
exception from the backend.
"""

from __future__ import annotations

import dataclasses
import math

from envpipeline.models.bundle import Bundle
from envpipeline.sandbox.base import Limits
from envpipeline.sandbox.ceiling import OperatorCeiling, clamp_timeout, host_cpus, host_memory_mb


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


def within_ceiling(bundle: Bundle, ceiling: OperatorCeiling | None = None) -> tuple[Bundle, list[str]]:
    """The bundle with its agent, verifier and build timeouts capped at the operator's ceiling,
    and a note per capped value (shown in the verdict's reasons)."""
    config = bundle.config
    notes: list[str] = []
    sections = {}
    for name, section, field in (
        ("agent", config.agent, "timeout_sec"),
        ("verifier", config.verifier, "timeout_sec"),
        ("environment", config.environment, "build_timeout_sec"),
    ):
        value, capped = clamp_timeout(f"{name}.{field}", getattr(section, field), ceiling)
        if capped:
            notes += [c.note() for c in capped]
            sections[name] = section.model_copy(update={field: value})
    if not sections:
        return bundle, notes
    return dataclasses.replace(bundle, config=config.model_copy(update=sections)), notes
