"""SFT / RL / eval splits with no leakage across seeds or near-duplicate instructions.

Tasks are grouped with union-find: two tasks share a group when they share a `seed_key` or when
their instructions' word 3-gram Jaccard similarity reaches `near_duplicate_threshold`. Whole groups
are assigned to splits, so neither a seed nor a near-duplicate pair ever straddles two splits.
Assignment is deterministic: within each family, groups are ordered by a salted hash of their
sorted task ids and each goes to the split furthest below its target share (ties: sft, rl, eval);
every split with a positive fraction first receives one group while enough groups remain. A group
with no SFT trajectory at all never goes to the SFT split (it could not be used there).
`leakage_report` re-checks any assignment from scratch, so tests can assert on it.

Near-duplicate pairs are found with MinHash LSH (``datasketch``) instead of comparing all pairs:
each instruction's shingle set gets a 128-permutation MinHash; banding parameters are chosen so a
pair AT the threshold becomes a candidate with probability >= 1 - 1e-6 (pairs above it even more
surely); every candidate is then confirmed by the exact Jaccard of its shingle sets, so a reported
pair always reaches the threshold (no false positive) and the semantics are those of all-pairs
comparison. 10,000 instructions take seconds instead of hours (``bench/near_duplicates.py``).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import TYPE_CHECKING, Annotated, Literal, cast

from pydantic import Field, model_validator

from envpipeline.models.dataset import AcceptedTask
from envpipeline.models.task import Strict

if TYPE_CHECKING:  # datasketch pulls in scipy (seconds): imported where the LSH runs
    from datasketch import MinHash

SplitName = Literal["sft", "rl", "eval"]
SPLITS: tuple[SplitName, ...] = ("sft", "rl", "eval")


class SplitConfig(Strict):
    """Target fractions (normalized), the near-duplicate threshold and the assignment salt."""

    sft: Annotated[float, Field(ge=0)] = 0.4
    rl: Annotated[float, Field(ge=0)] = 0.4
    eval: Annotated[float, Field(ge=0)] = 0.2
    near_duplicate_threshold: Annotated[float, Field(gt=0, le=1, description="word 3-gram Jaccard")] = 0.8
    ngram: Annotated[int, Field(ge=1)] = 3
    salt: Annotated[str, Field(description="changes the deterministic group order")] = "envpipeline-splits-v1"

    @model_validator(mode="after")
    def _positive(self) -> SplitConfig:
        if self.sft + self.rl + self.eval <= 0:
            raise ValueError("at least one split fraction must be positive")
        return self

    def fractions(self) -> dict[SplitName, float]:
        """Normalized target share of each split."""
        total = self.sft + self.rl + self.eval
        return {"sft": self.sft / total, "rl": self.rl / total, "eval": self.eval / total}


class NearDuplicatePair(Strict):
    """Two tasks whose instructions are near duplicates."""

    a: str
    b: str
    jaccard: float


class LeakageReport(Strict):
    """What crosses split boundaries (both lists empty means no leakage)."""

    seeds_across_splits: Annotated[list[str], Field(description="seed keys found in two or more splits")]
    near_duplicates_across_splits: Annotated[list[NearDuplicatePair], Field(description="pairs split apart")]
    near_duplicate_pairs: Annotated[int, Field(description="near-duplicate pairs in the whole set")]
    threshold: float
    n_groups: Annotated[int | None, Field(description="leakage groups, when known")] = None
    split_sizes: dict[str, int]
    clean: Annotated[bool, Field(description="no seed and no near-duplicate pair crosses splits")]


class SplitResult(Strict):
    """The assignment of every task, its groups and the leakage report."""

    assignments: Annotated[dict[str, SplitName], Field(description="task_id -> split")]
    groups: Annotated[list[list[str]], Field(description="task ids that must share a split")]
    report: LeakageReport

    def of(self, split: str) -> list[str]:
        """Task ids of one split, sorted."""
        return sorted(t for t, s in self.assignments.items() if s == split)


def shingles(text: str, n: int = 3) -> frozenset[tuple[str, ...]]:
    """Lower-cased word n-grams of a text (the whole text when it has fewer than n words)."""
    words = re.findall(r"\w+", text.lower())
    if len(words) < n:
        return frozenset([tuple(words)])
    return frozenset(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def jaccard(a: frozenset, b: frozenset) -> float:
    """|a ∩ b| / |a ∪ b| (1.0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 1.0


NUM_PERM = 128
#: the chance that a pair exactly at the threshold is never a candidate, at most
MISS_PROBABILITY = 1e-6


def lsh_bands(threshold: float, num_perm: int = NUM_PERM, miss: float = MISS_PROBABILITY) -> tuple[int, int]:
    """(bands, rows) for LSH: the most rows per band (fewest spurious candidates) such that a pair
    of Jaccard `threshold` collides in some band with probability >= 1 - `miss`."""
    best = (num_perm, 1)
    for rows in range(1, num_perm + 1):
        bands = num_perm // rows
        if (1 - threshold**rows) ** bands <= miss:
            best = (bands, rows)
    return best


def _minhashes(grams: Sequence[frozenset[tuple[str, ...]]]) -> list[MinHash]:
    from datasketch import MinHash

    encoded = [[" ".join(g).encode() for g in gs] for gs in grams]
    return MinHash.bulk(encoded, num_perm=NUM_PERM, seed=1)


def candidate_pairs(grams: Sequence[frozenset[tuple[str, ...]]], threshold: float) -> set[tuple[int, int]]:
    """Index pairs (i < j) that MinHash LSH says may reach `threshold` (a superset, to be confirmed)."""
    from datasketch import MinHashLSH

    lsh = MinHashLSH(num_perm=NUM_PERM, params=lsh_bands(threshold))
    found: set[tuple[int, int]] = set()
    for i, minhash in enumerate(_minhashes(grams)):
        found.update((cast(int, j), i) for j in lsh.query(minhash))  # keys are the indexes inserted
        lsh.insert(i, minhash)
    return found


def near_duplicate_pairs(
    tasks: Sequence[AcceptedTask], threshold: float, n: int = 3
) -> list[NearDuplicatePair]:
    """Every pair whose shingle Jaccard reaches `threshold`, in task order (LSH candidates confirmed by
    the exact Jaccard: see the module docstring)."""
    grams = [shingles(t.instruction, n) for t in tasks]
    pairs = []
    for i, j in sorted(candidate_pairs(grams, threshold)):
        score = jaccard(grams[i], grams[j])
        if score >= threshold:
            pairs.append(NearDuplicatePair(a=tasks[i].task_id, b=tasks[j].task_id, jaccard=round(score, 6)))
    return pairs


def near_duplicate_pairs_all(
    tasks: Sequence[AcceptedTask], threshold: float, n: int = 3
) -> list[NearDuplicatePair]:
    """The reference: every pair compared (O(n²); for tests and the bench only)."""
    grams = [(t.task_id, shingles(t.instruction, n)) for t in tasks]
    pairs = []
    for (ida, ga), (idb, gb) in combinations(grams, 2):
        score = jaccard(ga, gb)
        if score >= threshold:
            pairs.append(NearDuplicatePair(a=ida, b=idb, jaccard=round(score, 6)))
    return pairs


class _UnionFind:
    def __init__(self, items: Sequence[str]) -> None:
        self.parent = {i: i for i in items}

    def find(self, item: str) -> str:
        while self.parent[item] != item:
            self.parent[item] = self.parent[self.parent[item]]
            item = self.parent[item]
        return item

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def leakage_groups(tasks: Sequence[AcceptedTask], config: SplitConfig) -> list[list[str]]:
    """Groups of task ids that must share a split (same seed, or near-duplicate instructions)."""
    ids = [t.task_id for t in tasks]
    if len(set(ids)) != len(ids):
        raise ValueError("task ids must be unique")
    uf = _UnionFind(ids)
    first_of_seed: dict[str, str] = {}
    for task in tasks:
        uf.union(first_of_seed.setdefault(task.seed_key, task.task_id), task.task_id)
    for pair in near_duplicate_pairs(tasks, config.near_duplicate_threshold, config.ngram):
        uf.union(pair.a, pair.b)
    groups: dict[str, list[str]] = {}
    for task_id in ids:
        groups.setdefault(uf.find(task_id), []).append(task_id)
    return sorted(sorted(g) for g in groups.values())


def assign_splits(tasks: Sequence[AcceptedTask], config: SplitConfig | None = None) -> SplitResult:
    """Assign whole leakage groups to splits, per family, deterministically (see module docstring)."""
    config = config or SplitConfig()
    family = {t.task_id: t.family for t in tasks}
    has_sft = {t.task_id: t.reference_messages is not None for t in tasks}
    groups = leakage_groups(tasks, config)
    fractions = config.fractions()
    assignments: dict[str, SplitName] = {}
    by_family: dict[str, list[list[str]]] = {}
    for group in groups:
        majority = Counter(family[t] for t in group).most_common(1)[0][0]
        by_family.setdefault(majority, []).append(group)
    for name in sorted(by_family):
        ordered = sorted(
            by_family[name], key=lambda g: hashlib.sha256(f"{config.salt}:{','.join(g)}".encode()).hexdigest()
        )
        total = sum(len(g) for g in ordered)
        counts: dict[SplitName, int] = dict.fromkeys(SPLITS, 0)
        eligible: list[SplitName] = [s for s in SPLITS if fractions[s] > 0]
        for i, group in enumerate(ordered):
            # a group without any SFT trajectory (e.g. terminal bundles) is useless in the SFT split
            wanted: list[SplitName] = [
                s for s in eligible if s != "sft" or any(has_sft[t] for t in group)
            ] or eligible
            empty: list[SplitName] = [s for s in wanted if counts[s] == 0]
            score: dict[SplitName, tuple[float, int]]
            if empty and len(ordered) - i >= len(empty):
                score = {s: (fractions[s], -SPLITS.index(s)) for s in empty}
            else:
                score = {s: (fractions[s] * total - counts[s], -SPLITS.index(s)) for s in wanted}
            split: SplitName = max(score, key=score.__getitem__)
            counts[split] += len(group)
            assignments.update(dict.fromkeys(group, split))
    report = leakage_report(tasks, assignments, config.near_duplicate_threshold, config.ngram, len(groups))
    return SplitResult(assignments=assignments, groups=groups, report=report)


def leakage_report(
    tasks: Sequence[AcceptedTask],
    assignments: Mapping[str, str],
    threshold: float = 0.8,
    n: int = 3,
    n_groups: int | None = None,
) -> LeakageReport:
    """Check an assignment from scratch: seeds and near-duplicate pairs that cross splits."""
    splits_of_seed: dict[str, set[str]] = {}
    for task in tasks:
        splits_of_seed.setdefault(task.seed_key, set()).add(assignments[task.task_id])
    pairs = near_duplicate_pairs(tasks, threshold, n)
    crossing = [p for p in pairs if assignments[p.a] != assignments[p.b]]
    seeds = sorted(k for k, s in splits_of_seed.items() if len(s) > 1)
    sizes = Counter(assignments[t.task_id] for t in tasks)
    return LeakageReport(
        seeds_across_splits=seeds,
        near_duplicates_across_splits=crossing,
        near_duplicate_pairs=len(pairs),
        threshold=threshold,
        n_groups=n_groups,
        split_sizes={s: sizes.get(s, 0) for s in SPLITS},
        clean=not seeds and not crossing,
    )
