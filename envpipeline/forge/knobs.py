"""Family knobs as difficulty: where a bundle sits on its knob ranges, and how an action moves it.

A procedural synthesis action keeps the family (so the skill subgraph survives) and moves knobs:
``increase``/``reduce`` step the knobs of the chosen axis (``in_depth`` -> depth knobs,
``in_breadth`` -> breadth knobs) up or down by a quarter of their range (at least one unit);
``diversify`` keeps the knobs and draws a new generator seed (``in_breadth`` also nudges one
breadth knob by one unit, keeping difficulty in the same neighbourhood).
"""

from __future__ import annotations

import random
from typing import Any

from envpipeline.models.selection import Direction, Projection
from envpipeline.terminal.families.base import TaskFamily


def knob_ranges(family: TaskFamily[Any]) -> dict[str, tuple[int, int, str]]:
    """name -> (low, high, axis) for every knob of a family."""
    ranges = {}
    for name, prop in family.knob_model.model_json_schema()["properties"].items():
        ranges[name] = (
            int(prop.get("minimum", 0)),
            int(prop.get("maximum", 1)),
            str(prop.get("axis", "depth")),
        )
    return ranges


def difficulty_of(family: TaskFamily[Any], knobs: dict[str, Any]) -> float:
    """Mean normalized knob position in [0, 1] (0 = every knob at its minimum)."""
    return family.knob_position(knobs)


def move_knobs(
    family: TaskFamily[Any],
    knobs: dict[str, Any],
    projection: Projection,
    direction: Direction,
    rng: random.Random,
) -> dict[str, Any]:
    """The knob values after one synthesis action (bounded by each knob's range)."""
    axis = "depth" if direction == "in_depth" else "breadth"
    moved = dict(knobs)
    ranges = knob_ranges(family)
    if projection == "diversify_frontier":
        if direction == "in_breadth":
            breadth = [n for n, (lo, hi, ax) in ranges.items() if ax == "breadth" and hi > lo]
            if breadth:
                name = rng.choice(sorted(breadth))
                low, high, _ = ranges[name]
                moved[name] = min(high, max(low, int(moved[name]) + rng.choice((-1, 1))))
        return moved
    sign = 1 if projection == "increase_complexity" else -1
    for name, (low, high, knob_axis) in ranges.items():
        if knob_axis != axis or name not in moved:
            continue
        step = max(1, (high - low) // 4)
        moved[name] = min(high, max(low, int(moved[name]) + sign * step))
    return moved
