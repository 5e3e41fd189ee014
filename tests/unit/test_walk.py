"""Random walks over services and the size of the candidate space."""

from __future__ import annotations

import math
import random

import pytest

from envpipeline.compose.walk import count_candidate_sets, random_walk
from envpipeline.errors import CompositionError

SERVICES = ["calendar", "mail", "chat", "maps", "shop"]
CASES = [(SERVICES, 6), (SERVICES, 12), (SERVICES[:2], 3), (SERVICES[:2], 7), (SERVICES[:3], 11)]


@pytest.mark.parametrize(("services", "length"), CASES)
@pytest.mark.parametrize("seed", range(40))
def test_walk_covers_every_service_without_consecutive_repeats(services, length, seed):
    walk = random_walk(services, length, random.Random(seed))
    assert len(walk) == length
    assert set(walk) == set(services)
    assert all(a != b for a, b in zip(walk, walk[1:])), walk
    assert len(walk) > len(set(walk)), "at least one service is revisited"


def test_walk_is_deterministic_per_seed():
    walks = [random_walk(SERVICES, 9, random.Random(42)) for _ in range(3)]
    assert walks[0] == walks[1] == walks[2]
    others = {tuple(random_walk(SERVICES, 9, random.Random(seed))) for seed in range(20)}
    assert len(others) > 1, "different seeds give different walks"


def test_walk_does_not_mutate_the_service_list():
    services = list(SERVICES)
    random_walk(services, 8, random.Random(0))
    assert services == SERVICES


@pytest.mark.parametrize(("services", "length"), [(SERVICES, 5), (SERVICES, 1), (SERVICES[:2], 2)])
def test_walk_shorter_than_k_plus_one_is_rejected(services, length):
    with pytest.raises(CompositionError, match="K\\+1"):
        random_walk(services, length, random.Random(0))


@pytest.mark.parametrize("services", [[], ["calendar"]])
def test_walk_needs_two_services(services):
    with pytest.raises(CompositionError, match="at least 2"):
        random_walk(services, 4, random.Random(0))


def test_walk_rejects_duplicate_services():
    with pytest.raises(CompositionError, match="distinct"):
        random_walk(["mail", "mail", "chat"], 5, random.Random(0))


def test_candidate_set_counts():
    assert count_candidate_sets(448, 5) == math.comb(448, 5)
    assert count_candidate_sets(448, 5) == pytest.approx(1.47e11, rel=0.01)
    assert count_candidate_sets(448, 7) == pytest.approx(6.86e14, rel=0.01)
    assert count_candidate_sets(4, 5) == 0


@pytest.mark.parametrize(("n", "k"), [(-1, 5), (448, -1)])
def test_candidate_set_counts_reject_negative_sizes(n, k):
    with pytest.raises(CompositionError):
        count_candidate_sets(n, k)
