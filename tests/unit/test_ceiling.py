"""A bundle cannot raise its own limits past the operator's ceiling; every cap is reported."""

from __future__ import annotations

import math

import pytest

from envpipeline.errors import ConfigError
from envpipeline.models.bundle import TaskConfig
from envpipeline.sandbox.ceiling import (
    OperatorCeiling,
    clamp_limits,
    clamp_timeout,
    host_cpus,
)

CEILING = OperatorCeiling(cpus=2, memory_mb=4096, pids=512, storage_mb=8192, timeout_sec=1800)


def config(**environment: object) -> TaskConfig:
    return TaskConfig.model_validate({"environment": environment})


@pytest.mark.parametrize(
    ("environment", "setting", "allowed"),
    [
        ({"memory_mb": 100_000}, "environment.memory_mb", 4096),
        ({"memory_mb": 2**63 - 1}, "environment.memory_mb", 4096),
        ({"cpus": 64}, "environment.cpus", 2),
        ({"cpus": math.inf}, "environment.cpus", 2),
    ],
)
def test_a_hostile_limit_is_clamped_and_reported(environment, setting, allowed):
    limits, notes = clamp_limits(config(**environment), CEILING)
    assert [(n.setting, n.allowed) for n in notes] == [(setting, allowed)]
    assert getattr(limits, setting.split(".")[1]) == allowed
    assert "clamped to the operator's ceiling" in notes[0].note()


def test_limits_within_the_ceiling_are_kept_as_asked():
    limits, notes = clamp_limits(config(cpus=1.5, memory_mb=2048), CEILING)
    assert notes == []
    assert (limits.cpus, limits.memory_mb) == (1.5, 2048)
    assert limits.pids <= CEILING.pids


@pytest.mark.parametrize("asked", [math.inf, 1e300, 86_400.0])
def test_a_timeout_past_the_ceiling_becomes_the_ceiling(asked):
    value, notes = clamp_timeout("verifier.timeout_sec", asked, CEILING)
    assert value == 1800 and notes[0].asked == asked


def test_storage_is_clamped():
    limits, notes = clamp_limits(config(storage_mb=10**9), CEILING)
    assert limits.storage_mb == 8192 and notes[0].setting == "environment.storage_mb"


def test_the_default_ceiling_is_this_host():
    ceiling = OperatorCeiling.from_env({})
    assert ceiling.cpus == host_cpus()
    assert ceiling.memory_mb >= 512


@pytest.mark.parametrize("value", ["0", "-3", "lots", "inf", "nan"])
def test_a_bad_ceiling_variable_is_a_clear_error(value):
    with pytest.raises(ConfigError, match="ENVPIPELINE_MAX_MEMORY_MB"):
        OperatorCeiling.from_env({"ENVPIPELINE_MAX_MEMORY_MB": value})


def test_the_ceiling_is_read_from_the_environment():
    ceiling = OperatorCeiling.from_env({"ENVPIPELINE_MAX_CPUS": "0.5", "ENVPIPELINE_MAX_TIMEOUT_SEC": "60"})
    assert (ceiling.cpus, ceiling.timeout_sec) == (0.5, 60)
    _, notes = clamp_limits(config(cpus=1), ceiling)
    assert notes[0].allowed == 0.5
