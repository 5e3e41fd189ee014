"""Envs-FORGE actions and scores (paper, sections 3.2-3.3 and appendix A.1).

An action is a projection x a direction (six action variants). For a seed with pass rate ``p``:

* transfer prior (Eq. 1): ``p' = clip(p + delta(a, d), 0, 1)`` with the defaults
  ``delta = -0.25`` (increase_complexity), ``+0.25`` (reduce_complexity), ``0`` (diversify_frontier),
  configurable per projection or per action variant (``"increase_complexity/in_breadth"``);
  with a calibrated model (`envpipeline.select.calibration`, learned from the measured pass
  rates of earlier rounds) ``p' = clip(p + a + b p)`` per action variant and task family instead;
* frontier score (Eq. 2): ``f = exp(-(p' - target)^2 / (2 sigma^2))``, target 0.5, sigma 0.2;
* direction affinity: a tie-break bonus ``epsilon`` (default 1e-3) for the direction that matches
  the operator semantics of appendix A.1/C.2. increase and reduce "follow the same skill chain"
  (in_depth); diversify "varies fixtures, neighbouring constraints or surrounding context while
  keeping difficulty in the same neighbourhood" (in_breadth). The transfer prior is direction-blind,
  so without it both directions of a projection tie; with it the paper's five cases come out as
  reported. The affinity enters the solver objective only: ``frontier_score`` excludes it. With a
  calibration holding measured data the directions differ by their fitted transfer, and the
  affinity is off (it stays the tie-break of the uncalibrated prior only).

Reward bands of a seed's pass rate (used in the solver payload):

==========  ===================
unsolved    p = 0
hard        0 < p <= 0.25
frontier    0.25 < p < 0.75
easy        0.75 <= p < 1
saturated   p = 1
==========  ===================
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from envpipeline.models.selection import DIRECTIONS, PROJECTIONS, Direction, Projection
from envpipeline.select.calibration import TransferCalibration

#: The six (projection, direction) action variants in a fixed order (the candidate order).
ACTIONS: tuple[tuple[Projection, Direction], ...] = tuple((p, d) for p in PROJECTIONS for d in DIRECTIONS)

DEFAULT_TRANSFER: dict[str, float] = {
    "increase_complexity": -0.25,
    "reduce_complexity": 0.25,
    "diversify_frontier": 0.0,
}

#: The direction each projection's operators naturally follow (appendix A.1 / C.2).
AFFINE_DIRECTION: dict[str, str] = {
    "increase_complexity": "in_depth",
    "reduce_complexity": "in_depth",
    "diversify_frontier": "in_breadth",
}

#: Growth of the candidate prompt relative to the seed instruction, per projection (an estimate
#: used by the prompt-length eligibility check before anything is generated).
DEFAULT_PROMPT_GROWTH: dict[str, float] = {
    "increase_complexity": 1.3,
    "reduce_complexity": 0.9,
    "diversify_frontier": 1.1,
}

_VARIANTS = {f"{p}/{d}" for p, d in ACTIONS}


class SelectorConfig(BaseModel):
    """Every knob of the selector: scores, penalties, coverage, eligibility and the solver."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    target: Annotated[float, Field(ge=0.0, le=1.0, description="frontier target pass rate")] = 0.5
    sigma: Annotated[float, Field(gt=0.0, description="frontier width")] = 0.2
    transfer: Annotated[
        dict[str, float],
        Field(description="transfer prior overrides by projection or 'projection/direction'"),
    ] = {}
    calibration: Annotated[
        TransferCalibration | None,
        Field(description="transfer fitted from measured pass rates (None: the prior above)"),
    ] = None
    affinity_epsilon: Annotated[
        float, Field(ge=0.0, le=0.01, description="tie-break bonus of the affine direction")
    ] = 1e-3
    optional_penalty: Annotated[
        float, Field(ge=0.0, description="objective cost of activating one optional skill node")
    ] = 5e-3
    coverage_penalty: Annotated[
        float, Field(ge=0.0, description="objective cost per unit of coverage shortfall xi_v")
    ] = 1.0
    max_slack: Annotated[float, Field(ge=0.0, le=1.0, description="xi_bar: cap on each xi_v")] = 0.2
    coverage_targets: Annotated[
        dict[str, float] | None,
        Field(description="skill -> requested share of the portfolio; None: each skill's share of the pool"),
    ] = None
    max_prompt_tokens: Annotated[int, Field(gt=0, description="prompt-length eligibility limit")] = 4096
    prompt_growth: Annotated[dict[str, float], Field(description="prompt growth per projection")] = dict(
        DEFAULT_PROMPT_GROWTH
    )
    breadth_additions: Annotated[int, Field(ge=0, description="neighbour nodes in_breadth may add")] = 2
    time_limit: Annotated[
        float | None,
        Field(gt=0.0, description="hard wall-clock limit of a SCIP solve, s; None: scaled to the instance"),
    ] = None
    time_limit_base: Annotated[
        float, Field(gt=0.0, description="scaled limit: seconds every solve gets (see scaled_time_limit)")
    ] = 10.0
    time_limit_per_1k: Annotated[
        float, Field(ge=0.0, description="scaled limit: seconds added per 1,000 candidates")
    ] = 0.5
    time_limit_max: Annotated[float, Field(gt=0.0, description="scaled limit: cap, s")] = 600.0
    enumerate_max: Annotated[int, Field(ge=1, le=24, description="largest instance enumerated")] = 24
    scip_seed: Annotated[int, Field(ge=0, description="SCIP random seed shift")] = 0
    start_method: Annotated[
        Literal["fork", "spawn", "forkserver"], Field(description="how the solver child process starts")
    ] = "fork"
    dominance: Annotated[
        bool, Field(description="drop candidates dominated within their seed before the portfolio solve")
    ] = True

    @field_validator("transfer")
    @classmethod
    def _known_actions(cls, value: dict[str, float]) -> dict[str, float]:
        for key, delta in value.items():
            if key not in DEFAULT_TRANSFER and key not in _VARIANTS:
                known = ", ".join([*DEFAULT_TRANSFER, *sorted(_VARIANTS)])
                raise ValueError(f"unknown action '{key}' in transfer (known: {known})")
            if not -1.0 <= delta <= 1.0:
                raise ValueError(f"transfer[{key!r}] = {delta} is outside [-1, 1]")
        return value

    @field_validator("prompt_growth")
    @classmethod
    def _known_projections(cls, value: dict[str, float]) -> dict[str, float]:
        for key, growth in value.items():
            if key not in DEFAULT_TRANSFER or growth <= 0:
                raise ValueError(f"prompt_growth[{key!r}] must name a projection and be > 0")
        return value

    @field_validator("coverage_targets")
    @classmethod
    def _shares(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        for skill, share in (value or {}).items():
            if not 0.0 <= share <= 1.0:
                raise ValueError(f"coverage target of '{skill}' must be in [0, 1], got {share}")
        return value


def transfer_delta(projection: str, direction: str, config: SelectorConfig) -> float:
    """delta(a, d) of Eq. 1: the per-variant override, else the per-projection one, else the default."""
    variant = f"{projection}/{direction}"
    if variant in config.transfer:
        return config.transfer[variant]
    return config.transfer.get(projection, DEFAULT_TRANSFER[projection])


def prior_deltas(config: SelectorConfig) -> dict[str, float]:
    """``projection/direction`` -> the uncalibrated delta of every action variant."""
    return {f"{p}/{d}": transfer_delta(p, d, config) for p, d in ACTIONS}


def projected_pass_rate(
    pass_rate: float, projection: str, direction: str, config: SelectorConfig, family: str | None = None
) -> float:
    """Eq. 1: the pass rate after the action, clipped to [0, 1]; the calibrated fit of the
    variant (the family's where it has one) when the config carries a calibration."""
    fit = config.calibration.fit_for(projection, direction, family) if config.calibration else None
    if fit is not None:
        return fit.project(pass_rate)
    return min(1.0, max(0.0, pass_rate + transfer_delta(projection, direction, config)))


def frontier_score(projected: float, config: SelectorConfig) -> float:
    """Eq. 2: exp(-(p - target)^2 / (2 sigma^2))."""
    return math.exp(-((projected - config.target) ** 2) / (2.0 * config.sigma**2))


def affinity(projection: str, direction: str) -> int:
    """1 when the direction is the projection's natural one (A.1), else 0."""
    return int(AFFINE_DIRECTION[projection] == direction)


def calibrated(config: SelectorConfig) -> bool:
    """Whether the transfer comes from measured data (then the affinity tie-break is off)."""
    return config.calibration is not None and config.calibration.observations > 0


def objective_weight(frontier: float, projection: str, direction: str, config: SelectorConfig) -> float:
    """The solver coefficient of x_c: the frontier score, plus the affinity tie-break while the
    transfer is uncalibrated."""
    if calibrated(config):
        return frontier
    return frontier + config.affinity_epsilon * affinity(projection, direction)


def reward_band(pass_rate: float) -> str:
    """The reward band of a pass rate (see the module docstring)."""
    if pass_rate <= 0.0:
        return "unsolved"
    if pass_rate <= 0.25:
        return "hard"
    if pass_rate < 0.75:
        return "frontier"
    if pass_rate < 1.0:
        return "easy"
    return "saturated"
