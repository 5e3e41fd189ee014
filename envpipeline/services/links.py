"""Hops and actions: how a service takes part in a composed task.

A *hop* consumes a value the agent already knows (a person, a city, ...), plants a record in the
service's state keyed by that value, and reveals a new value of another type: the information
needed at the next step is discoverable only here. An *action* consumes a known value and asks
the agent to change the state; it yields the criteria that check the change.

Value types are a small shared vocabulary, so any two services can be linked by a typed flow.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, get_args

from pydantic import BaseModel

from envpipeline.errors import PlantingError
from envpipeline.models.criteria import ValueKind
from envpipeline.models.task import Condition, Criterion, fill_template

#: The state model of one service (what its hops and actions plant into).
StateT = TypeVar("StateT", bound=BaseModel)

#: The value types of the data flow (`ValueKind` is their one definition).
ValueType = ValueKind
VALUE_TYPES: tuple[ValueType, ...] = get_args(ValueKind)

#: The noun of each value type (instructions and replies name values by it).
VALUE_NOUNS: dict[str, str] = {
    "person": "person",
    "email": "email address",
    "city": "city",
    "date": "date",
    "code": "reference code",
    "title": "title",
    "booking_code": "booking confirmation code",
    "flight_number": "flight number",
    "ticket_code": "ticket code",
    "order_number": "order number",
    "sku": "SKU",
    "advisory_code": "advisory code",
    "employee_code": "employee code",
}

#: How an instruction refers to a value of each type once it is known.
VALUE_PHRASES: dict[str, str] = {
    "person": "that person",
    "email": "that email address",
    "city": "that city",
    "date": "that date",
    "code": "that reference code",
    "title": "that title",
    "booking_code": "that confirmation code",
    "flight_number": "that flight number",
    "ticket_code": "that ticket code",
    "order_number": "that order number",
    "sku": "that SKU",
    "advisory_code": "that advisory code",
    "employee_code": "that employee code",
}


#: One step of a path inside observation data: a key, a list index, or a selector (field -> value)
#: that picks the first item of a list whose fields hold those values ("the row whose name is X").
PathKey = str | int | dict[str, Any]


@dataclass(frozen=True)
class PlannedCall:
    """One tool call of a hop or action (tool is the service-local name)."""

    tool: str
    arguments: dict[str, Any]
    #: arguments filled from the carried value: arg -> format template ("{value}" by default)
    inputs: dict[str, str] = field(default_factory=dict)
    reveals: tuple[PathKey, ...] | None = None
    #: arguments read from an earlier call of the same plan: arg -> (call index, path in data)
    bind: Mapping[str, tuple[int, tuple[PathKey, ...]]] = field(default_factory=dict)


@dataclass(frozen=True)
class HopPlan:
    """What a planted hop asks of the agent and what it reveals."""

    calls: list[PlannedCall]
    output: str
    phrase: str
    #: the revealed value over ``{of}`` where this plant needs more than the hop's own relation
    #: (constants the calls state: a listing's required filter); empty: the hop's relation
    relation: str = ""


@dataclass(frozen=True)
class ActionPlan:
    """What a planted action asks of the agent and how it is checked."""

    calls: list[PlannedCall]
    criteria: list[Criterion]
    phrase: str


@dataclass(frozen=True)
class Hop(Generic[StateT]):
    """A read link: knows `consumes`, reveals `produces`; plants into a `StateT` state."""

    name: str
    consumes: ValueType
    produces: ValueType
    plant: Callable[[StateT, random.Random, str], HopPlan]
    #: the revealed value as a noun phrase over the known one, ``{of}`` marking where it goes
    #: ("the passenger on flight booking {of}"): goal-level instructions describe values by it and
    #: must name no service; empty: `relation_of` derives a generic one from the types
    relation: str = ""
    kind: str = field(default="hop", init=False)

    def relation_of(self, known: str) -> str:
        """The revealed value described through the `known` one (a name or a nested description)."""
        return (self.relation or _derived_relation(self)).format(of=known)


@dataclass(frozen=True)
class Action(Generic[StateT]):
    """A write link: uses a known `consumes` value to change a `StateT` state."""

    name: str
    consumes: ValueType
    plant: Callable[[StateT, random.Random, str], ActionPlan]
    kind: str = field(default="action", init=False)


@dataclass(frozen=True)
class Source(Generic[StateT]):
    """A start link: a read that needs no known value (it takes no argument: an account's id, the
    current user) and reveals a `produces` value; plants into a `StateT` state. A chain that starts
    from one states no value: the agent reads it first. Its plan's `HopPlan.relation` is the value
    as a noun phrase with nothing to fill in ("the account id that get account info gives")."""

    name: str
    produces: ValueType
    plant: Callable[[StateT, random.Random], HopPlan]
    kind: str = field(default="source", init=False)


def spoken_title(title: str) -> str:
    """A service's title as a request names it: without parenthetical remarks ("GitHub (official
    MCP server)" is "GitHub"; "Cloudflare Workers bindings (KV, R2, D1, Hyperdrive)" is "Cloudflare
    Workers bindings"), which read badly in an instruction and whose commas broke its phrasing."""
    return " ".join(re.sub(r"\([^)]*\)", " ", title).split()) or title


_FIELD_HOP = re.compile(r"^(?P<noun>[a-z]+)_(?P<key>[A-Za-z]+)_to_(?P<out>[A-Za-z]+)$")


def _words(name: str) -> str:
    """``reporterEmail`` -> ``reporter email``."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).replace("_", " ").lower()


def _derived_relation(hop: Hop[Any]) -> str:
    """A relation for a hop that declares none: from a ``<record>_<key>_to_<field>`` name, else the types."""
    m = _FIELD_HOP.match(hop.name)
    if m:
        return f"the {_words(m['out'])} of the {_words(m['noun'])} whose {_words(m['key'])} is {{of}}"
    return f"the {VALUE_NOUNS.get(hop.produces, 'value')} that {_words(hop.name)} gives for {{of}}"


#: What a service offers the composer: its hops, actions and sources over its state model.
Link = Hop[StateT] | Action[StateT] | Source[StateT]


def expect_record(collection: str, description: str, /, *, absent: bool = False, **match: Any) -> Criterion:
    """A state criterion: a record in `collection` matching every condition (does not) exist.

    Each keyword is a field; its value is either a plain value (equality) or a tuple
    ``(op, value)`` with op in eq/ne/contains/icontains/addresses. Service and id are filled by the composer.
    """
    conditions = {}
    for name, expected in match.items():
        if isinstance(expected, tuple):
            conditions[name] = Condition(op=expected[0], value=expected[1])
        else:
            conditions[name] = Condition(op="eq", value=expected)
    return Criterion(
        id="",
        description=description,
        kind="record_absent" if absent else "record_exists",
        collection=collection,
        match=conditions,
    )


def selected(items: Any, selector: dict[str, Any]) -> list[Any]:
    """The items of a list whose fields hold every value of `selector` (none when not a list)."""
    if not isinstance(items, list):
        return []
    return [
        item
        for item in items
        if isinstance(item, dict) and all(k in item and item[k] == v for k, v in selector.items())
    ]


def read_path(data: Any, path: tuple[PathKey, ...] | list[PathKey]) -> Any:
    """Follow `path` (keys, list indexes, selectors) inside observation data; KeyError if absent."""
    for key in path:
        if isinstance(key, dict):
            matches = selected(data, key)
            if not matches:
                raise KeyError(str(key))
            data = matches[0]
        elif isinstance(key, int):
            if not isinstance(data, list) or key >= len(data):
                raise KeyError(key)
            data = data[key]
        else:
            if not isinstance(data, dict) or key not in data:
                raise KeyError(key)
            data = data[key]
    return data


def revealed(data: Any, path: tuple[PathKey, ...] | list[PathKey], source: str) -> str:
    """The value a hop reveals at `path` of `data` (a string or a number), as text. A world model
    may answer without one there (an LLM's free-form object): `PlantingError` naming `source`."""
    try:
        value = read_path(data, path)
    except KeyError:
        value = None
    if isinstance(value, bool) or not isinstance(value, str | int | float) or str(value) == "":
        where = ".".join(str(key) for key in path)
        raise PlantingError(f"{source} answered without a value at {where}")
    return str(value)


def value_at(observations: list[dict[str, Any]], step: int, path: list[PathKey] | tuple[PathKey, ...]) -> Any:
    """What `path` holds in the data of observation `step` (`read_path`), or None where nothing is."""
    try:
        return read_path(observations[step].get("data"), path)
    except (KeyError, IndexError):
        return None


def resolve_arguments(call: PlannedCall, value: str | None, earlier: list[dict[str, Any]]) -> dict[str, Any]:
    """The concrete arguments of a planned call, given the carried value and earlier observations."""
    arguments = dict(call.arguments)
    for name, template in call.inputs.items():
        arguments[name] = fill_template(template, value)
    for name, (index, path) in call.bind.items():
        observation = earlier[index]
        arguments[name] = read_path(observation.get("data"), path)
    return arguments


def execute_planned(service: Any, calls: list[PlannedCall], value: str | None) -> list[dict[str, Any]]:
    """Run a hop's or action's planned calls against a live service; returns the observations."""
    observations: list[dict[str, Any]] = []
    for call in calls:
        try:
            arguments = resolve_arguments(call, value, observations)
        except KeyError:
            observations.append({"success": False, "error": {"code": 400, "message": "unbound"}})
            continue
        observations.append(service.call(call.tool, arguments))
    return observations


def query_hop(tool: str, value: str, reveals: tuple[str | int, ...], output: str, phrase: str) -> HopPlan:
    """The common one-call hop: ``tool(query=<carried value>)`` shows `output` at `reveals`."""
    call = PlannedCall(tool, {"query": value}, inputs={"query": "{value}"}, reveals=reveals)
    return HopPlan([call], output, phrase)
