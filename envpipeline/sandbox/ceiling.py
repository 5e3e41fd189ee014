"""The operator's ceiling on what a bundle may ask for: CPUs, memory, processes, disk, time.

A bundle's ``task.toml`` sets its own limits (``[environment] cpus / memory_mb / storage_mb``,
``[agent] / [verifier] timeout_sec``, ``build_timeout_sec``). An untrusted bundle must not raise
them past what the machine can give: `clamp_limits` and `clamp_timeout` cap every value at the
operator's `OperatorCeiling` and report each cap as a `Clamped` note (shown in the verdict), so a
hostile ``memory_mb = 100000`` or ``timeout_sec = inf`` runs under the ceiling instead of taking
the machine or crashing the backend.

The ceiling comes from ``ENVPIPELINE_MAX_CPUS``, ``ENVPIPELINE_MAX_MEMORY_MB``,
``ENVPIPELINE_MAX_PIDS``, ``ENVPIPELINE_MAX_STORAGE_MB`` and ``ENVPIPELINE_MAX_TIMEOUT_SEC``;
unset ones default to this host (its CPU count, half its memory) and fixed bounds.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from functools import cache
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from envpipeline.errors import ConfigError
from envpipeline.models.bundle import TaskConfig
from envpipeline.sandbox.base import Limits

#: environment variable -> ceiling field
ENV_VARS = {
    "ENVPIPELINE_MAX_CPUS": "cpus",
    "ENVPIPELINE_MAX_MEMORY_MB": "memory_mb",
    "ENVPIPELINE_MAX_PIDS": "pids",
    "ENVPIPELINE_MAX_STORAGE_MB": "storage_mb",
    "ENVPIPELINE_MAX_TIMEOUT_SEC": "timeout_sec",
}


def host_cpus() -> int:
    """CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def host_memory_mb() -> int:
    """Physical memory of this host in MiB (4096 when it cannot be read)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20)
    except (ValueError, OSError, AttributeError):
        return 4096


class OperatorCeiling(BaseModel):
    """The most any one sandbox session may get, whatever its bundle asks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cpus: Annotated[float, Field(gt=0, allow_inf_nan=False)] = Field(
        default_factory=lambda: float(host_cpus())
    )
    memory_mb: Annotated[int, Field(gt=0)] = Field(default_factory=lambda: max(512, host_memory_mb() // 2))
    pids: Annotated[int, Field(gt=0)] = 1024
    storage_mb: Annotated[int, Field(gt=0)] = 10_240
    timeout_sec: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 3600.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> OperatorCeiling:
        """The ceiling with ``ENVPIPELINE_MAX_*`` overrides; a bad value is a ConfigError naming it."""
        environ = os.environ if environ is None else environ
        values = {
            field: environ[var].strip() for var, field in ENV_VARS.items() if environ.get(var, "").strip()
        }
        try:
            return cls.model_validate(values)
        except ValidationError as e:
            field = str(e.errors()[0]["loc"][0])
            var = next(v for v, f in ENV_VARS.items() if f == field)
            raise ConfigError(
                f"{var}={values.get(field)!r}: must be a positive finite number ({e.errors()[0]['msg']})"
            ) from e


@cache
def operator_ceiling() -> OperatorCeiling:
    """This process's ceiling (read once from the environment)."""
    return OperatorCeiling.from_env()


class Clamped(BaseModel):
    """One value a bundle asked for above the ceiling, and what it got."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    setting: str
    asked: float
    allowed: float

    def note(self) -> str:
        """A line for the verdict's reasons."""
        return f"{self.setting} = {self.asked:g} asked, clamped to the operator's ceiling {self.allowed:g}"


def _cap(setting: str, asked: float, allowed: float, notes: list[Clamped]) -> float:
    if math.isnan(asked) or asked > allowed:
        notes.append(Clamped(setting=setting, asked=asked, allowed=allowed))
        return allowed
    return asked


def clamp_limits(config: TaskConfig, ceiling: OperatorCeiling | None = None) -> tuple[Limits, list[Clamped]]:
    """The session limits of a bundle under the ceiling, and a note per clamped value."""
    ceiling = ceiling or operator_ceiling()
    env = config.environment
    notes: list[Clamped] = []
    cpus = _cap("environment.cpus", float(env.cpus), ceiling.cpus, notes)
    memory = _cap("environment.memory_mb", float(env.memory_mb), float(ceiling.memory_mb), notes)
    storage = _cap("environment.storage_mb", float(env.storage_mb), float(ceiling.storage_mb), notes)
    limits = Limits(
        cpus=cpus, memory_mb=int(memory), pids=min(Limits().pids, ceiling.pids), storage_mb=int(storage)
    )
    return limits, notes


def clamp_timeout(
    setting: str, asked: float, ceiling: OperatorCeiling | None = None
) -> tuple[float, list[Clamped]]:
    """A phase timeout (agent, verifier, build) under the ceiling; ``inf`` becomes the ceiling."""
    ceiling = ceiling or operator_ceiling()
    notes: list[Clamped] = []
    return _cap(setting, float(asked), ceiling.timeout_sec, notes), notes
