"""Random walks over selected services and the typed data flows that link their visits."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from envpipeline.compose.variants import weighted_order
from envpipeline.errors import CompositionError
from envpipeline.services.links import Action, Hop


def count_candidate_sets(n_services: int, k: int) -> int:
    """Exact number of k-service candidate sets from a library of n (C(448,5) ≈ 1.47e11)."""
    if k < 0 or n_services < 0:
        raise CompositionError("service counts must be non-negative")
    return math.comb(n_services, k)


def random_walk(services: list[str], length: int, rng: random.Random) -> list[str]:
    """A walk over `services` that covers each, never repeats consecutively, revisits one.

    The walk starts as a random order of all services (coverage, no repeats) and then gains
    ``length - len(services)`` extra visits, each inserted where it differs from both neighbours;
    walk length therefore controls the number of linked visits, not the number of services.
    """
    k = len(services)
    if k < 2:
        raise CompositionError("a composition needs at least 2 services")
    if length < k + 1:
        raise CompositionError(f"walk length {length} must be at least K+1 = {k + 1} (one revisit)")
    if len(set(services)) != k:
        raise CompositionError(f"a walk needs distinct services, got {services}")
    walk = list(services)
    rng.shuffle(walk)
    while len(walk) < length:
        service = rng.choice(services)
        slots = [
            i
            for i in range(len(walk) + 1)
            if (i == 0 or walk[i - 1] != service) and (i == len(walk) or walk[i] != service)
        ]
        # A service already on both sides of every gap (e.g. s,a,s) has no slot; draw again
        # (any service but the last visit fits at the end, so a draw with a slot always exists).
        if slots:
            walk.insert(rng.choice(slots), service)
    return walk


@dataclass(frozen=True)
class FlowPlan:
    """The typed links chosen for a walk: one hop per visit, actions on some visits."""

    hops: list[Hop]
    #: (visit index, action, index of the value it consumes: 0 = start value, i = hop i's output)
    actions: list[tuple[int, Action, int]]

    @property
    def types(self) -> list[str]:
        """Value types along the chain: the start value, then each hop's output."""
        return [self.hops[0].consumes] + [h.produces for h in self.hops]


def assign_hops(
    walk: list[str],
    hops_by_service: dict[str, list[Hop]],
    rng: random.Random,
    budget: int = 400,
    weights: dict[str, dict[str, float]] | None = None,
    type_weights: dict[str, float] | None = None,
) -> list[Hop] | None:
    """Choose one hop per visit so each hop consumes what the previous one produced.

    With `weights` (service -> link name -> weight) heavier hops are tried first more often
    (`weighted_order`); without, every order is equally likely. `type_weights` (value type ->
    factor) multiplies the weight of a hop by the larger factor of the types it consumes and produces.
    """
    chosen: list[Hop] = []
    steps = 0

    def extend(i: int) -> bool:
        nonlocal steps
        if i == len(walk):
            return True
        options = [h for h in hops_by_service[walk[i]] if i == 0 or h.consumes == chosen[-1].produces]
        if weights is None and type_weights is None:
            rng.shuffle(options)
        else:
            own = (weights or {}).get(walk[i], {})
            scores = [
                own.get(h.name, 1.0) * _type_factor(type_weights, h.consumes, h.produces) for h in options
            ]
            options = weighted_order(options, scores, rng)
        for hop in options:
            steps += 1
            if steps > budget:
                return False
            chosen.append(hop)
            if extend(i + 1):
                return True
            chosen.pop()
        return False

    return chosen if extend(0) else None


def assign_actions(
    walk: list[str],
    hops: list[Hop],
    actions_by_service: dict[str, list[Action]],
    rng: random.Random,
    min_actions: int,
    min_services: int,
    weights: dict[str, dict[str, float]] | None = None,
    first_types: frozenset[str] = frozenset(),
) -> list[tuple[int, Action, int]] | None:
    """Attach actions to visits; each consumes an earlier value its own service never touched.

    Value j (0 = start, j = output of hop j) is touched by the services of visits j and j+1
    (1-based hops), so an action at visit i may use it only if its service is neither; this keeps
    every planted record unambiguous. Actions on values discovered late are placed first (longer
    dependency chains); before them, actions on a value of `first_types`.
    """
    types = [hops[0].consumes] + [h.produces for h in hops]
    candidates: list[tuple[int, Action, int]] = []
    for i, service in enumerate(walk):
        for action in actions_by_service.get(service, []):
            for j in range(0, i + 1):
                touching = {walk[j - 1] if j > 0 else None, walk[j] if j < len(walk) else None}
                if types[j] == action.consumes and service not in touching:
                    candidates.append((i, action, j))
    if weights is None:
        rng.shuffle(candidates)
    else:
        scores = [weights.get(walk[i], {}).get(action.name, 1.0) for i, action, _ in candidates]
        candidates = weighted_order(candidates, scores, rng)
    # prefer values discovered late: longer dependency chains
    candidates.sort(key=lambda c: (types[c[2]] not in first_types, -c[2]))
    chosen: list[tuple[int, Action, int]] = []
    used: set[tuple[str, int]] = set()
    visits: set[int] = set()
    for cand in candidates:
        i, action, j = cand
        if i in visits or (walk[i], j) in used:
            continue
        chosen.append(cand)
        visits.add(i)
        used.add((walk[i], j))
    if len(chosen) < min_actions or len({walk[i] for i, _, _ in chosen}) < min_services:
        return None
    return sorted(chosen, key=lambda c: c[0])


def _type_factor(type_weights: dict[str, float] | None, *value_types: str) -> float:
    """The larger factor of `value_types` in `type_weights` (1 where none is given)."""
    if not type_weights:
        return 1.0
    return max(type_weights.get(t, 1.0) for t in value_types)
