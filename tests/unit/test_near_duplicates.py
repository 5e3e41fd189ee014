"""Near-duplicate detection with MinHash LSH: the all-pairs answer, no false positive, fast."""

from __future__ import annotations

import random
import time

from envpipeline.export.splits import (
    jaccard,
    lsh_bands,
    near_duplicate_pairs,
    near_duplicate_pairs_all,
    shingles,
)
from envpipeline.models.dataset import AcceptedTask

WORDS = [f"w{i}" for i in range(400)]


def task(i: int, text: str) -> AcceptedTask:
    return AcceptedTask(
        task_id=f"t{i:05d}",
        family="compose",
        seed_key=f"s{i}",
        instruction=text,
        system_prompt="",
        difficulty="unknown",
        skills=[],
        interfaces=[],
        criteria="{}",
        tools="[]",
        gate_stats="{}",
        provenance="{}",
    )


def corpus(n: int, planted: int, seed: int = 3) -> tuple[list[AcceptedTask], set[tuple[str, str]]]:
    """`n` random 40-word instructions; `planted` of them copy an earlier one with one word changed."""
    rng = random.Random(seed)
    texts = [" ".join(rng.choices(WORDS, k=40)) for _ in range(n - planted)]
    pairs = set()
    for k in range(planted):
        source = rng.randrange(len(texts) - k)
        words = texts[source].split()
        words[-1] = "changed"  # one word at the end: 38 of 39 3-grams shared, Jaccard 0.95
        texts.append(" ".join(words))
        pairs.add((f"t{source:05d}", f"t{len(texts) - 1:05d}"))
    return [task(i, t) for i, t in enumerate(texts)], pairs


def test_lsh_finds_the_planted_near_duplicates_like_all_pairs() -> None:
    tasks, planted = corpus(600, 20)
    found = near_duplicate_pairs(tasks, 0.8)
    assert {(p.a, p.b) for p in found} >= planted
    assert found == near_duplicate_pairs_all(tasks, 0.8), "same pairs, scores and order"


def test_lsh_reports_no_pair_below_the_threshold() -> None:
    base = " ".join(f"x{i}" for i in range(30))
    words = base.split()
    close = " ".join([*words[:25], "y1", "y2", "y3", "y4", "y5"])  # 23 of 28 3-grams shared
    score = jaccard(shingles(base), shingles(close))
    assert 0.6 < score < 0.8
    tasks = [task(0, base), task(1, close), task(2, base + " please")]
    assert [(p.a, p.b) for p in near_duplicate_pairs(tasks, 0.8)] == [("t00000", "t00002")]
    at_score = near_duplicate_pairs(tasks, score)
    assert ("t00000", "t00001") in {(p.a, p.b) for p in at_score}
    assert at_score == near_duplicate_pairs_all(tasks, score)


def test_lsh_bands_keep_pairs_at_the_threshold() -> None:
    for threshold in (0.3, 0.5, 0.8, 0.9, 1.0):
        bands, rows = lsh_bands(threshold)
        assert bands * rows <= 128
        assert (1 - threshold**rows) ** bands <= 1e-6, threshold


def test_ten_thousand_instructions_take_seconds() -> None:
    tasks, planted = corpus(10_000, 50)
    start = time.perf_counter()
    found = {(p.a, p.b) for p in near_duplicate_pairs(tasks, 0.8)}
    elapsed = time.perf_counter() - start
    assert found >= planted
    assert elapsed < 60, f"{elapsed:.1f} s"
