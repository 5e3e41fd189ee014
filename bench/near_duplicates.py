"""Near-duplicate detection bench: all-pairs comparison (old) vs MinHash LSH + exact confirmation (new).

Synthetic instructions in the shape of ours (templated sentences over entity names, dates and
amounts, 25-60 words); 5% of them are planted near-duplicates of another one (a word or two changed,
or a short suffix such as "Please hurry." added), so real pairs straddle the threshold.

Prints, for the default threshold (word 3-gram Jaccard >= 0.8):

1. 1,000 instructions: seconds of the old all-pairs method, of the new one, and their ratio;
2. recall of the new method on the pairs the old one finds at 1,000 (must be 1.0), and whether it
   reports any pair the old one does not (it cannot: every candidate is confirmed exactly);
3. 10,000 instructions: seconds of the new method (all pairs would be ~100x the 1,000 figure).

Goal: 10,000 instructions in seconds.

Usage: python bench/near_duplicates.py [--small 1000] [--large 10000] [--threshold 0.8]
"""

from __future__ import annotations

import argparse
import random
import time

from envpipeline.export.splits import near_duplicate_pairs, near_duplicate_pairs_all
from envpipeline.models.dataset import AcceptedTask

VERBS = ["Find", "Look up", "Check", "Update", "Create", "Move", "Send", "Archive", "Schedule", "Assign"]
OBJECTS = ["the invoice", "the ticket", "the meeting", "the note", "the order", "the task", "the message"]
NAMES = [
    f"{first} {last}"
    for first in ("Ana", "Ben", "Chen", "Dara", "Eli", "Farah", "Goran", "Hana")
    for last in ("Moreau", "Fischer", "Okafor", "Silva", "Tanaka", "Novak", "Haddad", "Larsen")
]
WORDS = [
    "project",
    "budget",
    "review",
    "quarterly",
    "report",
    "vendor",
    "contract",
    "renewal",
    "customer",
    "account",
    "region",
    "warehouse",
    "shipment",
    "priority",
    "deadline",
    "calendar",
    "folder",
    "label",
    "status",
    "owner",
    "team",
    "channel",
    "forum",
    "thread",
    "reply",
    "summary",
    "total",
    "amount",
    "balance",
    "transfer",
    "city",
    "weather",
    "forecast",
]
SUFFIXES = ["Please hurry.", "Thanks!", "Reply with the result only.", "Keep it short."]


def instruction(rng: random.Random) -> str:
    """One synthetic multi-step instruction."""
    sentences = []
    for _ in range(rng.randint(3, 6)):
        detail = " ".join(rng.sample(WORDS, rng.randint(3, 7)))
        sentences.append(
            f"{rng.choice(VERBS)} {rng.choice(OBJECTS)} of {rng.choice(NAMES)} about {detail} "
            f"due 2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} for {rng.randint(10, 9999)} EUR."
        )
    return " ".join(sentences)


def near_copy(text: str, rng: random.Random) -> str:
    """A planted near-duplicate: a short suffix, or one or two words replaced."""
    if rng.random() < 0.5:
        return f"{text} {rng.choice(SUFFIXES)}"
    words = text.split()
    for _ in range(rng.randint(1, 2)):
        words[rng.randrange(len(words))] = rng.choice(WORDS)
    return " ".join(words)


def synthetic_tasks(n: int, seed: int = 13, duplicate_share: float = 0.05) -> list[AcceptedTask]:
    """`n` accepted-task stand-ins whose instructions include planted near-duplicates."""
    rng = random.Random(seed)
    texts: list[str] = []
    for _ in range(n):
        if texts and rng.random() < duplicate_share:
            texts.append(near_copy(rng.choice(texts), rng))
        else:
            texts.append(instruction(rng))
    return [
        AcceptedTask(
            task_id=f"t{i:05d}",
            family="compose",
            seed_key=f"s{i:05d}",
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
        for i, text in enumerate(texts)
    ]


def timed(fn, *args):  # noqa: ANN001, ANN002, ANN202 - a bench helper
    start = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--large", type=int, default=10000)
    parser.add_argument("--threshold", type=float, default=0.8)
    args = parser.parse_args()

    small = synthetic_tasks(args.small)
    old, old_s = timed(near_duplicate_pairs_all, small, args.threshold)
    new, new_s = timed(near_duplicate_pairs, small, args.threshold)
    old_pairs, new_pairs = {(p.a, p.b) for p in old}, {(p.a, p.b) for p in new}
    recall = len(old_pairs & new_pairs) / len(old_pairs) if old_pairs else 1.0
    print(
        f"{args.small} instructions: all-pairs {old_s:.2f} s, MinHash LSH {new_s:.2f} s, "
        f"{old_s / new_s:.0f}x faster"
    )
    print(
        f"  pairs >= {args.threshold}: all-pairs {len(old_pairs)}, LSH {len(new_pairs)}; "
        f"recall {recall:.3f}; pairs not found by all-pairs: {len(new_pairs - old_pairs)}"
    )
    large = synthetic_tasks(args.large)
    found, large_s = timed(near_duplicate_pairs, large, args.threshold)
    print(
        f"{args.large} instructions: MinHash LSH {large_s:.2f} s ({len(found)} pairs); "
        f"all-pairs not run (~{old_s * (args.large / args.small) ** 2:.0f} s extrapolated)"
    )


if __name__ == "__main__":
    main()
