"""The links the composer chooses from: each service's own, plus derived variants, weighted by tool rarity.

Derived *detail variants* reach tools no declared link uses: a hop that finds a record by a search
and reads a field from it gets a twin that then opens the record by its id with the service's
``get_<record>`` tool (``get_flight``, ``get_advisory``, ...) and reads the field there. The same
derivation applies to every service, built-in or imported; a variant joins only when it runs: it is
planted and executed on generated states and must reveal the hop's value.

Choice weights prefer links whose tools few other links use, so a run's reference solutions cover
more of the library; the weights are a fixed function of the library and the draws come from the
candidate's own rng, so a task stays a function of its seed.
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from typing import Any

from envpipeline.services import vocab
from envpipeline.services.base import Service
from envpipeline.services.links import Action, Hop, HopPlan, PlannedCall, Source, execute_planned, read_path

#: generated states each derived variant is checked on
_CHECK_SEEDS = (0, 1)


def _singular(collection: str) -> str:
    if collection.endswith("ies"):
        return collection[:-3] + "y"
    return collection[:-1] if collection.endswith("s") else collection


def _id_argument(service_cls: type[Service[Any]], tool: str) -> str | None:
    """The one required argument of a get-by-id tool, if it has exactly one."""
    tool_def = service_cls.tools.get(tool)
    if tool_def is None or tool_def.writes:
        return None
    required = [name for name, info in tool_def.args_model.model_fields.items() if info.is_required()]
    return required[0] if len(required) == 1 else None


def _opener(service_cls: type[Service[Any]], collection: str) -> str | None:
    """The tool that opens one record of `collection` by its id: ``get_<record>``, or outside the
    curated services any get tool of that collection (``box_file_info_tool``, ``get_single_person``)."""
    tool = f"get_{_singular(collection)}"
    if _id_argument(service_cls, tool) is not None or service_cls.curated:
        return tool
    operations: dict[str, str] = getattr(service_cls, "operations", {})
    tools: dict[str, list[str]] = getattr(service_cls, "collections", {})
    getters = [t for t in tools.get(collection, []) if operations.get(t) == "get"]
    return next((t for t in getters if _id_argument(service_cls, t) is not None), None)


def detail_variant(service_cls: type[Service[Any]], hop: Hop[Any]) -> Hop[Any] | None:
    """`hop` confirmed through a tool that opens the record by its id (`_opener`), or None when the
    service has no such tool. Outside the curated services a hop that selects its row by value
    (a listing hop) gets one too."""
    probe = _plant_sample(service_cls, hop, 0)
    if probe is None:
        return None
    last = max(k for k, c in enumerate(probe.calls) if c.reveals)
    path = probe.calls[last].reveals or ()
    if len(path) < 3 or not isinstance(path[0], str):
        return None
    # a row picked by position, or (outside the curated services) selected by value unless what it
    # reveals is the id: opening the record by the id just found, to read that id, confirms nothing
    by_value = isinstance(path[1], dict) and path[-1] != "id" and not service_cls.curated
    if not isinstance(path[1], int) and not by_value:
        return None
    tool = _opener(service_cls, path[0])
    id_arg = _id_argument(service_cls, tool) if tool else None
    if tool is None or id_arg is None or any(c.tool == tool for c in probe.calls):
        return None
    record = _record_key(service_cls, path[0])

    def plant(state: Any, rng: random.Random, value: str) -> HopPlan:
        plan = hop.plant(state, rng, value)
        at = max(k for k, c in enumerate(plan.calls) if c.reveals)
        found = tuple(plan.calls[at].reveals or ())
        opened = PlannedCall(
            tool, {id_arg: None}, bind={id_arg: (at, (*found[:2], "id"))}, reveals=(record, *found[2:])
        )
        return HopPlan(
            [*plan.calls, opened], plan.output, f"{plan.phrase} (open the {record} itself to read it)"
        )

    # the base hop's relation, also one derived from its name: the variant's own name (``..._via_get_x``)
    # would read as tool words ("the date that trip traveler email to start date via get trip gives")
    relation = hop.relation_of("{of}")
    variant = Hop(f"{hop.name}_via_{tool}", hop.consumes, hop.produces, plant, relation=relation)
    return variant if all(_runs(service_cls, variant, seed) for seed in _CHECK_SEEDS) else None


def _record_key(service_cls: type[Service[Any]], collection: str) -> str:
    """Where the opening tool's answer holds the record: its noun (``file`` for Box's ``files``)."""
    nouns: dict[str, str] = getattr(service_cls, "nouns", {})
    return nouns.get(collection, _singular(collection))


def _plant_sample(service_cls: type[Service[Any]], hop: Hop[Any], seed: int) -> HopPlan | None:
    rng = vocab.seeded(f"variant-check:{service_cls.name}:{hop.name}:{seed}")
    try:
        state = service_cls.generate_state(rng)
        return hop.plant(state, rng, vocab.sample_value(hop.consumes, rng))
    except Exception:  # noqa: BLE001 - a hop that cannot be planted here gets no variant
        return None


def _runs(service_cls: type[Service[Any]], hop: Hop[Any], seed: int) -> bool:
    """Whether `hop`, planted on a generated state, reveals its output when its calls run."""
    rng = vocab.seeded(f"variant-check:{service_cls.name}:{hop.name}:{seed}")
    try:
        state = service_cls.generate_state(rng)
        value = vocab.sample_value(hop.consumes, rng)
        plan = hop.plant(state, rng, value)
        observations = execute_planned(service_cls(state), plan.calls, value)
        last = observations[-1]
        reveals = plan.calls[-1].reveals or ()
        return bool(last.get("success")) and str(read_path(last.get("data"), reveals)) == plan.output
    except Exception:  # noqa: BLE001 - any failure keeps the variant out
        return False


@functools.lru_cache(maxsize=1024)
def links_of(service_cls: type[Service[Any]]) -> tuple[tuple[Hop[Any], ...], tuple[Action[Any], ...]]:
    """A service's hops (declared, then derived variants) and actions (static per service class)."""
    links = service_cls.links()
    hops = [x for x in links if isinstance(x, Hop)]
    variants = [v for v in (detail_variant(service_cls, h) for h in hops) if v is not None]
    return tuple(hops + variants), tuple(x for x in links if isinstance(x, Action))


@functools.lru_cache(maxsize=1024)
def sources_of(service_cls: type[Service[Any]]) -> tuple[Source[Any], ...]:
    """A service's sources: reads that start a chain from nothing the agent knows (`links.Source`)."""
    return tuple(x for x in service_cls.links() if isinstance(x, Source))


@functools.lru_cache(maxsize=1024)
def link_weights(service_cls: type[Service[Any]]) -> dict[str, float]:
    """Choice weight per link name: 1 + how many of its tools only it (or one other link) uses."""
    hops, actions = links_of(service_cls)
    tools: dict[str, set[str]] = {}
    for link in (*hops, *actions):
        rng = vocab.seeded(f"link-tools:{service_cls.name}:{link.name}")
        try:
            plan = link.plant(service_cls.generate_state(rng), rng, vocab.sample_value(link.consumes, rng))
            tools[link.name] = {c.tool for c in plan.calls}
        except Exception:  # noqa: BLE001 - a link that cannot be planted here counts as common
            tools[link.name] = set()
    users = Counter(t for used in tools.values() for t in used)
    return {name: 1.0 + sum(1 for t in used if users[t] <= 2) for name, used in tools.items()}


def service_weight(service_cls: type[Service[Any]]) -> float:
    """How often a draw over the whole library picks a service: its number of tools, so that a
    service of 150 tools is visited often enough for its references to use them. (Weighing by the
    tools its links reach covers as much, 67.2% against 66.5% of 1,000 drafts, but derives every
    service's links before the first draw: 7 s.)"""
    return float(len(service_cls.tools))


def weighted_order(items: list[Any], weights: list[float], rng: random.Random) -> list[Any]:
    """`items` in a random order where heavier items tend to come first (one draw per item)."""
    keys = [rng.random() ** (1.0 / w) for w in weights]
    order = sorted(range(len(items)), key=lambda i: keys[i], reverse=True)
    return [items[i] for i in order]


def reset_link_caches() -> None:
    """Forget every service's derived links (after a world model swap, links hold the old model)."""
    links_of.cache_clear()
    sources_of.cache_clear()
    link_weights.cache_clear()
