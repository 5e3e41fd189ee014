"""The calibrated transfer prior: Eq. 1's delta learned from measured (seed p, rewrite p) pairs.

The default prior moves every seed by a constant (``p' = p -/+ 0.25``). A content-sensitive
policy does not: adding an edge case that a solver of skill ``s`` handles with probability ``s``
multiplies the pass rate by about ``s``, so the move depends on ``p``. Per action variant
(projection/direction), and per task family where the data allow, the calibrated model is

    p' = clip(p + a + b * p, 0, 1)

(``a = delta`` and ``b = 0`` is the default prior; increase by one edge case is ``a ~ 0``,
``b ~ s - 1``; reduce is ``b ~ 1/s - 1``, saturating at 1). ``(a, b)`` is the posterior mode
(MAP) of a Bayesian regression of the measured ``p'`` on that clipped model, with Gaussian noise
and a Gaussian prior centred on the prior ``(a0, b0)`` whose precision equals `strength`
pseudo-observations of the prior spread uniformly over ``p`` in [0, 1] (second moments
``M = [[1, 1/2], [1/2, 1/3]]``)::

    minimise  sum_i (clip(p_i + a + b p_i) - p'_i)^2  +  k (theta - theta0)' M (theta - theta0)

Where no prediction is clipped this is the conjugate posterior mean (ridge regression toward the
prior, `shrunk_fit`): ``(a, b) = (X'X + k M)^-1 (X'y + k M theta0)`` with ``y = p' - p`` and
``x = (1, p)``. The clip matters: a reduce that saturates (p' ~ 1 from p = 0.6 on) is not a line,
and fitting one would pull every projection toward the saturated points. The mode is found from
the best point of a coarse grid and from the prior, each refined by solving the ridge system on
the pairs whose prediction lies inside (0, 1) until that set stops changing; the candidate with
the lowest objective wins. With no observation it is the prior; with many it follows the data
(the prior weighs as much as `strength` of them). Two levels:

* global, per action variant: shrunk toward the default prior (``a0`` = the configured delta,
  ``b0 = 0``) with `strength` pseudo-observations;
* per family and action variant: only with at least `min_family_observations` of that family,
  shrunk toward the variant's global fit with `family_strength` pseudo-observations; otherwise the
  family uses the global fit.

Observations at p = 0 or 1 that did not move are kept: the clipped model predicts them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from envpipeline.models.selection import Direction, Projection

#: Second moments of x = (1, p) for p uniform on [0, 1]: where the prior's pseudo-observations sit.
_PRIOR_MOMENTS = ((1.0, 0.5), (0.5, 1.0 / 3.0))

FitSource = Literal["prior", "global", "family"]


class TransferObservation(BaseModel):
    """One measured rewrite: the seed's pass rate and the accepted bundle's, under one policy."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seed_id: Annotated[str, Field(description="the seed the bundle was synthesized from")]
    task_name: Annotated[str, Field(description="the accepted bundle")] = ""
    projection: Annotated[Projection, Field(description="the action's projection")]
    direction: Annotated[Direction, Field(description="the action's direction")]
    family: Annotated[str | None, Field(description="the seed's task family (None: imported)")] = None
    seed_pass_rate: Annotated[float, Field(ge=0.0, le=1.0, description="measured p of the seed")]
    measured_pass_rate: Annotated[float, Field(ge=0.0, le=1.0, description="measured p of the bundle")]
    projected_pass_rate: Annotated[
        float | None, Field(ge=0.0, le=1.0, description="what the selector projected")
    ] = None
    rollouts: Annotated[int, Field(ge=0, description="K behind each measured pass rate")] = 0
    policy: Annotated[str, Field(description="the policy that measured both")] = ""

    @property
    def action_variant(self) -> str:
        """``projection/direction``."""
        return f"{self.projection}/{self.direction}"


class TransferFit(BaseModel):
    """The calibrated move of one action variant (and family): p' = clip(p + a + b p)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    a: Annotated[float, Field(description="intercept of the change")]
    b: Annotated[float, Field(description="slope of the change in p")]
    observations: Annotated[int, Field(ge=0, description="measured pairs behind the fit")]
    source: Annotated[FitSource, Field(description="prior (no data), global or family")]

    def project(self, pass_rate: float) -> float:
        """The projected pass rate, clipped to [0, 1]."""
        return min(1.0, max(0.0, pass_rate + self.a + self.b * pass_rate))


class TransferCalibration(BaseModel):
    """Fitted transfer models by action variant, and by ``variant@family`` where data allow."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fits: Annotated[dict[str, TransferFit], Field(description="'projection/direction[@family]' -> fit")] = {}
    strength: Annotated[float, Field(gt=0.0, description="prior pseudo-observations (global level)")] = 4.0
    family_strength: Annotated[
        float, Field(gt=0.0, description="pseudo-observations of the global fit (family level)")
    ] = 4.0
    min_family_observations: Annotated[
        int, Field(ge=1, description="observations a family needs for a fit of its own")
    ] = 4

    @property
    def observations(self) -> int:
        """Measured pairs behind the global fits."""
        return sum(f.observations for k, f in self.fits.items() if "@" not in k)

    def fit_for(self, projection: str, direction: str, family: str | None = None) -> TransferFit | None:
        """The family's fit of the variant, else the variant's global fit, else None."""
        variant = f"{projection}/{direction}"
        if family is not None and f"{variant}@{family}" in self.fits:
            return self.fits[f"{variant}@{family}"]
        return self.fits.get(variant)


def shrunk_fit(
    pairs: Iterable[tuple[float, float]], prior: tuple[float, float], strength: float
) -> tuple[float, float, int]:
    """Posterior mean (a, b) of the unclipped model, y = p' - p on (1, p), given `strength`
    pseudo-observations of `prior` (the conjugate ridge solve); returns (a, b, number of pairs)."""
    (m00, m01), (_, m11) = _PRIOR_MOMENTS
    s00, s01, s11 = strength * m00, strength * m01, strength * m11
    r0 = s00 * prior[0] + s01 * prior[1]
    r1 = s01 * prior[0] + s11 * prior[1]
    n = 0
    for p, measured in pairs:
        y = measured - p
        s00, s01, s11 = s00 + 1.0, s01 + p, s11 + p * p
        r0, r1 = r0 + y, r1 + p * y
        n += 1
    det = s00 * s11 - s01 * s01  # > 0: the prior block is positive definite
    return (s11 * r0 - s01 * r1) / det, (s00 * r1 - s01 * r0) / det, n


#: the coarse grid the mode search starts from: a in [-1, 1], b in [-1.5, 1.5], step 0.25
_GRID_A = [k / 4 for k in range(-4, 5)]
_GRID_B = [k / 4 for k in range(-6, 7)]
_REFINEMENTS = 25


def _clip(value: float) -> float:
    return min(1.0, max(0.0, value))


def _objective(
    pairs: list[tuple[float, float]], theta: tuple[float, float], prior: tuple[float, float], strength: float
) -> float:
    """The negative log posterior (up to constants): clipped squared errors plus the prior term."""
    a, b = theta
    (m00, m01), (_, m11) = _PRIOR_MOMENTS
    da, db = a - prior[0], b - prior[1]
    penalty = strength * (m00 * da * da + 2.0 * m01 * da * db + m11 * db * db)
    return sum((_clip(p + a + b * p) - q) ** 2 for p, q in pairs) + penalty


def map_fit(
    pairs: Iterable[tuple[float, float]], prior: tuple[float, float], strength: float
) -> tuple[float, float, int]:
    """Posterior mode (a, b) of the clipped model (see the module docstring); (a, b, pairs)."""
    data = list(pairs)
    if not data:
        return prior[0], prior[1], 0
    grid = min(((a, b) for a in _GRID_A for b in _GRID_B), key=lambda t: _objective(data, t, prior, strength))
    best, best_value = prior, _objective(data, prior, strength=strength, prior=prior)
    for start in (prior, grid):
        theta = start
        inside: list[bool] | None = None
        for _ in range(_REFINEMENTS):
            now = [0.0 < p + theta[0] + theta[1] * p < 1.0 for p, _ in data]
            if now == inside:
                break
            inside = now
            a, b, _ = shrunk_fit((pq for pq, keep in zip(data, now) if keep), prior, strength)
            theta = (a, b)
        for candidate in (start, theta):
            value = _objective(data, candidate, prior, strength)
            if value < best_value:
                best, best_value = candidate, value
    return best[0], best[1], len(data)


def calibrate(
    observations: Iterable[TransferObservation],
    prior_delta: Mapping[str, float],
    *,
    strength: float = 4.0,
    family_strength: float = 4.0,
    min_family_observations: int = 4,
) -> TransferCalibration:
    """Fit every action variant (and family) from measured pairs, shrunk toward the prior.

    Args:
        observations: measured (seed p, rewrite p) pairs of earlier rounds.
        prior_delta: ``projection/direction`` -> the default prior's delta for every variant
            (`envpipeline.select.actions.prior_deltas`); variants without data keep it (b = 0).
        strength: pseudo-observations of the default prior in each global fit.
        family_strength: pseudo-observations of the global fit in each family fit.
        min_family_observations: a family with fewer observations of a variant uses the global fit.
    """
    by_variant: dict[str, list[TransferObservation]] = defaultdict(list)
    for obs in observations:
        by_variant[obs.action_variant].append(obs)
    fits: dict[str, TransferFit] = {}
    for variant, delta in prior_delta.items():
        rows = by_variant.get(variant, [])
        a, b, n = map_fit([(o.seed_pass_rate, o.measured_pass_rate) for o in rows], (delta, 0.0), strength)
        fits[variant] = TransferFit(a=a, b=b, observations=n, source="global" if n else "prior")
        per_family: dict[str, list[TransferObservation]] = defaultdict(list)
        for o in rows:
            if o.family is not None:
                per_family[o.family].append(o)
        for family, own in sorted(per_family.items()):
            if len(own) < min_family_observations:
                continue
            pairs = [(o.seed_pass_rate, o.measured_pass_rate) for o in own]
            fa, fb, fn = map_fit(pairs, (a, b), family_strength)
            fits[f"{variant}@{family}"] = TransferFit(a=fa, b=fb, observations=fn, source="family")
    return TransferCalibration(
        fits=fits,
        strength=strength,
        family_strength=family_strength,
        min_family_observations=min_family_observations,
    )
