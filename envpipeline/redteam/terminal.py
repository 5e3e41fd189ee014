"""The red-team gate of terminal bundles: every policy acts in the agent phase of its own trial.

Each policy gets a fresh session (`TerminalAttack`), acts as an agent would, and is then scored by
the same fresh verifier phase as the oracle (`envpipeline.terminal.trial`). A policy breaks the
bundle when the verifier gives it reward exactly 1; the gate passes when none does, and a
rejection names the policies that broke it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from envpipeline.models.bundle import Bundle
from envpipeline.models.gates import GateResult
from envpipeline.redteam.base import RedTeamPolicy, TerminalAttack, TerminalPolicyOutcome
from envpipeline.redteam.registry import policies_for
from envpipeline.redteam.summary import red_team_gate_result
from envpipeline.sandbox.base import ExecResult, Limits, Sandbox, SandboxSession
from envpipeline.sandbox.ceiling import clamp_limits
from envpipeline.terminal.bundle import read_bundle
from envpipeline.terminal.trial import AgentPhase, TrialResult, run_trial


def policy_phase(policy: RedTeamPolicy, bundle: Bundle, commands: list[str]) -> AgentPhase:
    """The agent phase of one policy: its `attack_terminal` in the live session."""

    def act(session: SandboxSession) -> ExecResult | None:
        attack = TerminalAttack(bundle, session)
        try:
            policy.attack_terminal(attack)
        finally:
            commands.extend(attack.commands)
        return attack.last

    return act


def outcome_of(policy: str, trial: TrialResult, calls: int = 0) -> TerminalPolicyOutcome:
    """A policy's outcome from its trial: binary 1 only for reward exactly 1.

    A tampered trial (the policy planted rewards or tests) is judged by what the fresh verifier
    scored: planting is evidence, but the gate asks whether the verifier itself can be fooled.
    """
    reward = {"ok": trial.reward, "tampered": trial.verifier_reward}.get(trial.verdict)
    return TerminalPolicyOutcome(
        policy=policy,
        binary=float(reward == 1.0),
        checklist=reward or 0.0,
        cfrr=0.0,
        calls=calls,
        reward=reward,
        verdict=trial.verdict,
        reason=trial.reason,
        seconds=round(trial.durations.get("total", 0.0), 3),
    )


def red_team(
    bundle: Bundle,
    sandbox: Sandbox,
    limits: Limits | None = None,
    policies: list[RedTeamPolicy] | None = None,
    known: Mapping[str, TrialResult] | None = None,
) -> list[TerminalPolicyOutcome]:
    """Every terminal policy (or the given ones) against `bundle`, one fresh session each.

    `known` holds trials already run for a policy name (gold verification's ``nop`` trial is the
    ``nop`` policy's), which are reused rather than run again.
    """
    limits = limits or clamp_limits(bundle.config)[0]
    policies = policies if policies is not None else policies_for("terminal")
    outcomes = []
    for policy in policies:
        if known and policy.name in known:
            outcomes.append(outcome_of(policy.name, known[policy.name]))
            continue
        commands: list[str] = []
        trial = run_trial(
            sandbox, bundle, f"red-team:{policy.name}", limits, act=policy_phase(policy, bundle, commands)
        )
        outcomes.append(outcome_of(policy.name, trial, len(commands)))
    return outcomes


def red_team_gate(outcomes: list[TerminalPolicyOutcome]) -> GateResult:
    """Gate: no red-team policy earns reward 1 on the bundle."""
    return red_team_gate_result(outcomes)


def outcomes_or_attack(
    bundle_path: str, stored: list[dict[str, Any]], sandbox: Sandbox
) -> list[dict[str, Any]]:
    """A verified bundle's red-team outcomes: the stored ones, or (rows verified before the gate
    existed) a fresh attack by every terminal policy, nop included."""
    if stored:
        return stored
    return [o.model_dump(mode="json") for o in red_team(read_bundle(bundle_path), sandbox)]
