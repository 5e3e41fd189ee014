"""The content-sensitive solver: success depends on the edge cases an instance contains."""

from __future__ import annotations

import random

import pytest

from envpipeline.errors import ConfigError
from envpipeline.policies.base import ComposedTarget, Policy, TerminalTarget
from envpipeline.policies.registry import PolicyConfig, build_policy
from envpipeline.policies.solver import ContentSensitiveSolver, forget_statements
from envpipeline.terminal.families.base import write_generated
from envpipeline.terminal.families.registry import get_family

K = 12


@pytest.fixture(scope="module")
def json_bundles(tmp_path_factory):
    family = get_family("json-transform")
    root = tmp_path_factory.mktemp("solver")
    knobs = family.knobs_for("medium")
    none = write_generated(family.generate(5, knobs, "medium", edge_cases=()), root / "none")
    every = write_generated(family.generate(5, knobs, "medium", edge_cases=family.variants), root / "all")
    return family, none, every


def test_the_solver_is_a_policy_built_from_the_registry():
    policy = build_policy(PolicyConfig(kind="solver", skill=0.6, seed=3))
    assert isinstance(policy, Policy) and isinstance(policy, ContentSensitiveSolver)
    assert (policy.skill, policy.seed, policy.kind) == (0.6, 3, "solver")


def test_pass_rate_follows_the_instance_edge_cases_with_the_same_draws(json_bundles, local_sandbox):
    family, none, every = json_bundles
    policy = ContentSensitiveSolver(skill=0.7, give_up=0.1)
    easy = [policy.rollout(TerminalTarget(none, local_sandbox), i) for i in range(K)]
    hard = [policy.rollout(TerminalTarget(every, local_sandbox), i) for i in range(K)]
    for i, (a, b) in enumerate(zip(easy, hard, strict=True)):
        known = policy.known_edge_cases(tuple(sorted(family.variants)), family.name, i)
        # without edge cases any attempt passes; with all of them only a solver that knows them all
        assert a.reward == (0.0 if known is None else 1.0), (i, a)
        assert b.reward == (1.0 if known is not None and known == set(family.variants) else 0.0), (i, b)
        assert a.submission == b.submission  # common random numbers: same draws on both bundles
    assert sum(r.reward for r in hard) < sum(r.reward for r in easy)
    assert any(r.detail["reused"] for r in easy)  # equal submissions run once


def test_the_solver_refuses_other_families():
    policy = ContentSensitiveSolver()
    with pytest.raises(ConfigError, match="terminal bundles only"):
        policy.rollout(ComposedTarget(task=object()), 0)  # type: ignore[arg-type]


def test_forgetting_statements_keeps_the_script_parseable():
    script = "#!/bin/bash\n# setup\ncd /app\necho a > out.txt\nif true; then\n  echo b >> out.txt\nfi\n"
    text, forgotten, total = forget_statements(script, random.Random(0), 1.0)
    assert (forgotten, total) == (3, 3)
    assert "echo" not in text and "# setup" in text
    same, none, _ = forget_statements(script, random.Random(0), 0.0)
    assert (same, none) == (script, 0)
