"""Every registered policy kind builds from a PolicyConfig, is a `Policy`, plays a terminal task and
refuses the families it does not support with a ConfigError."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from envpipeline.errors import ConfigError
from envpipeline.policies.base import (
    ComposedTarget,
    Policy,
    RolloutRecord,
    RolloutTarget,
    TargetFamily,
    TerminalTarget,
    WorldTarget,
)
from envpipeline.policies.registry import POLICIES, PolicyConfig, build_policy
from envpipeline.terminal.seeds import materialize_seed
from tests.llm_server import Reply, ScriptedLLMServer

KEY = "fam-text-parsing-easy-0"


def _recorded(tmp: Path, target_key: str) -> PolicyConfig:
    table = tmp / "rollouts.jsonl"
    rows = [{"task_id": target_key, "policy": "harness", "reward": r} for r in ("1", "0.25")]
    table.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return PolicyConfig(kind="recorded", rollouts_table=str(table))


def _llm(tmp: Path, target_key: str, server: ScriptedLLMServer) -> PolicyConfig:
    return PolicyConfig(
        kind="llm",
        model="openai/test",
        api_base=server.api_base,
        api_key_env="ENVPIPELINE_CONTRACT_KEY",
        max_steps=2,
        timeout_sec=60,
    )


#: how the contract builds each kind (a new kind must add its entry here)
CONFIGS: dict[str, Callable[..., PolicyConfig]] = {
    "scripted": lambda tmp, key, server: PolicyConfig(),
    "solver": lambda tmp, key, server: PolicyConfig(kind="solver"),
    "recorded": lambda tmp, key, server: _recorded(tmp, key),
    "llm": lambda tmp, key, server: _llm(tmp, key, server),
}


@pytest.fixture(scope="module")
def seed_dir(tmp_path_factory) -> Path:
    return Path(materialize_seed(KEY, tmp_path_factory.mktemp("seeds"))["bundle_path"])


@pytest.fixture
def server(monkeypatch) -> Any:
    monkeypatch.setenv("ENVPIPELINE_CONTRACT_KEY", "sk-test")
    with ScriptedLLMServer(default=Reply(content="I cannot do this task.")) as running:
        yield running


def _target(family: TargetFamily, tmp: Path) -> RolloutTarget:
    """A target of `family` for the refusal check (a kind refuses it before looking inside)."""
    if family == "composed":
        return ComposedTarget(task=SimpleNamespace(task_id="c-1"))  # type: ignore[arg-type]
    return WorldTarget(task=SimpleNamespace(task_id="w-1"), day_dir=tmp)  # type: ignore[arg-type]


def test_every_policy_kind_has_a_contract_config():
    assert set(POLICIES.all()) <= set(CONFIGS), "add the new kind's config to CONFIGS"
    assert {"scripted", "recorded"} <= set(POLICIES.all())


@pytest.mark.parametrize("kind", sorted(POLICIES.all()))
def test_a_kind_plays_a_terminal_task_and_refuses_unsupported_families(
    kind, seed_dir, local_sandbox, tmp_path, server
):
    policy = build_policy(CONFIGS[kind](tmp_path, KEY, server))
    assert isinstance(policy, Policy) and policy.kind == kind and policy.name
    assert policy.families and policy.families <= {"terminal", "composed", "world"}
    target = TerminalTarget(bundle_dir=seed_dir, sandbox=local_sandbox, task_id=KEY)
    if "terminal" in policy.families:
        record = policy.rollout(target, 0)
        assert isinstance(record, RolloutRecord)
        assert 0.0 <= record.reward <= 1.0
        assert (record.task_id, record.family, record.kind, record.index) == (KEY, "terminal", kind, 0)
    else:
        with pytest.raises(ConfigError):
            policy.rollout(target, 0)
    for family in {"composed", "world"} - policy.families:
        with pytest.raises(ConfigError):
            policy.rollout(_target(family, tmp_path), 0)


def test_an_unknown_kind_or_a_missing_setting_is_a_config_error():
    with pytest.raises(ConfigError, match="rollouts table"):
        build_policy(PolicyConfig(kind="recorded"))
    with pytest.raises(ValueError):
        PolicyConfig(kind="oracle")  # type: ignore[arg-type]
