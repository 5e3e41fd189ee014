"""The canonical table dump orders rows as it always did: by integer id, ties by sorted JSON."""

from __future__ import annotations

import json
import random

from envpipeline.worlds.state import _canonical_rows


def _reference_order(rows: list[dict]) -> list[dict]:
    return sorted(
        rows,
        key=lambda r: (
            r.get("id") if isinstance(r.get("id"), int) else 0,
            json.dumps(r, sort_keys=True, default=str),
        ),
    )


def test_rows_come_in_the_reference_order_with_or_without_unique_integer_ids():
    rng = random.Random(7)
    id_pools = [
        list(range(1, 40)),  # a primary key: the shortcut
        [1, 2, 2, 3],  # ties
        [1, True, 2],  # True equals 1
        ["a", "b", 3],  # text ids
        [None, 4, 5],  # a missing id
        [1.0, 2, 3],  # a float id
    ]
    for pool in id_pools:
        for _ in range(20):
            rows = [{"id": i, "body": rng.choice("xyz") * rng.randint(1, 3)} for i in pool]
            rows += [{"body": "no id"}] if pool[0] is None else []
            rng.shuffle(rows)
            assert _canonical_rows(rows) == _reference_order(rows)
            assert [type(r.get("id")) for r in _canonical_rows(rows)] == [
                type(r.get("id")) for r in _reference_order(rows)
            ]
