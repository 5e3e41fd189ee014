"""Lists service (SharePoint-like): lists with typed columns and items validated against them."""

from __future__ import annotations

import random
import re
from typing import Annotated, Literal

from pydantic import Field

from envpipeline.models.base import Strict
from envpipeline.services import vocab
from envpipeline.services.base import (
    Record,
    Service,
    ToolArgs,
    bad_request,
    conflict,
    dump,
    next_id,
    not_found,
    tool,
)
from envpipeline.services.links import (
    Action,
    ActionPlan,
    Hop,
    HopPlan,
    Link,
    PlannedCall,
    expect_record,
    query_hop,
)
from envpipeline.services.registry import register_service

NOW = "2026-05-15T10:00"
ColumnType = Literal["text", "number", "date", "choice", "person", "boolean"]
Value = str | float | bool | None
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
STATUSES = ["Not started", "In progress", "Done"]
#: list title -> (description, [(column, type, choices)])
TEMPLATES: dict[str, tuple[str, list[tuple[str, str, list[str]]]]] = {
    "Project Tracker": (
        "Milestones and owners",
        [
            ("Owner", "person", []),
            ("Due", "date", []),
            ("Status", "choice", STATUSES),
            ("Budget", "number", []),
        ],
    ),
    "Vendors": (
        "Approved suppliers",
        [("Contact", "person", []), ("Email", "text", []), ("City", "text", []), ("Active", "boolean", [])],
    ),
    "Asset Register": (
        "Company hardware",
        [
            ("Tag", "text", []),
            ("Assigned To", "person", []),
            ("Location", "text", []),
            ("Purchased", "date", []),
        ],
    ),
    "Travel Requests": (
        "Trips awaiting approval",
        [
            ("Traveler", "person", []),
            ("Destination", "text", []),
            ("Departure", "date", []),
            ("Approved", "boolean", []),
        ],
    ),
}


class Column(Strict):
    name: Annotated[str, Field(description="column name")]
    type: Annotated[ColumnType, Field(description="text, number, date, choice, person or boolean")]
    choices: Annotated[list[str], Field(description="allowed values of a choice column")] = []


class SPList(Record):
    id: str
    title: str
    description: str = ""
    columns: list[Column] = []


class ListItem(Record):
    id: str
    listId: str
    title: str
    values: dict[str, Value] = {}
    modified: str = NOW


class ListsState(Strict):
    lists: dict[str, SPList] = {}
    items: dict[str, ListItem] = {}


class NoArgs(ToolArgs):
    pass


class ListIdArgs(ToolArgs):
    listId: Annotated[str, Field(description="list id")]


class GetItemsArgs(ToolArgs):
    listId: Annotated[str, Field(description="list id")]
    filterColumn: Annotated[str | None, Field(description="column to filter on (or Title)")] = None
    filterValue: Annotated[
        str | None, Field(description="value the column must equal (case-insensitive)")
    ] = None
    maxResults: Annotated[int, Field(description="maximum items to return", ge=1, le=100)] = 50


class ItemIdArgs(ToolArgs):
    itemId: Annotated[str, Field(description="item id")]


class SearchItemsArgs(ToolArgs):
    query: Annotated[str, Field(description="text searched in item titles and values")]
    listId: Annotated[str | None, Field(description="restrict to one list")] = None


class CreateItemArgs(ToolArgs):
    listId: Annotated[str, Field(description="list id")]
    title: Annotated[str, Field(description="item title")]
    values: Annotated[dict[str, Value], Field(description="column name -> value, typed per column")] = {}


class UpdateItemArgs(ToolArgs):
    itemId: Annotated[str, Field(description="item id")]
    title: Annotated[str | None, Field(description="new title")] = None
    values: Annotated[dict[str, Value] | None, Field(description="column name -> new value")] = None


class SetFieldArgs(ToolArgs):
    itemId: Annotated[str, Field(description="item id")]
    column: Annotated[str, Field(description="column name")]
    value: Annotated[Value, Field(description="new value, typed per column (null clears it)")]


class CreateListArgs(ToolArgs):
    title: Annotated[str, Field(description="list title")]
    description: Annotated[str, Field(description="what the list tracks")] = ""
    columns: Annotated[list[Column], Field(description="typed columns besides Title")] = []


class AddColumnArgs(ToolArgs):
    listId: Annotated[str, Field(description="list id")]
    name: Annotated[str, Field(description="column name")]
    type: Annotated[ColumnType, Field(description="text, number, date, choice, person or boolean")]
    choices: Annotated[list[str], Field(description="allowed values of a choice column")] = []


def _check(column: Column, value: Value) -> Value:
    """A value coerced to its column's type, or a 400 error."""
    if value is None:
        return None
    kind, name = column.type, column.name
    if kind == "boolean":
        if not isinstance(value, bool):
            raise bad_request(f"column '{name}' expects true or false")
        return value
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise bad_request(f"column '{name}' expects a number")
        return float(value)
    if not isinstance(value, str):
        raise bad_request(f"column '{name}' expects text")
    if kind == "date" and not DATE_RE.match(value):
        raise bad_request(f"column '{name}' expects a date YYYY-MM-DD")
    if kind == "choice" and value not in column.choices:
        raise bad_request(f"column '{name}' must be one of: {', '.join(column.choices)}")
    return value


def _item_text(item: ListItem) -> str:
    return " ".join([item.title, *(str(v) for v in item.values.values())]).lower()


def _random_value(column: Column, rng: random.Random) -> Value:
    if column.type == "person":
        return vocab.person_name(rng)
    if column.type == "date":
        return vocab.date(rng)
    if column.type == "choice":
        return rng.choice(column.choices)
    if column.type == "number":
        return float(rng.randint(1, 90) * 500)
    if column.type == "boolean":
        return rng.random() < 0.5
    if column.name == "Tag":
        return vocab.code(rng, "AST")
    if column.name == "Email":
        return vocab.email_for(vocab.person_name(rng), rng)
    return vocab.city(rng)[0]


def _make_list(lists: dict[str, SPList], title: str) -> SPList:
    description, cols = TEMPLATES[title]
    lid = next_id("list", lists)
    lists[lid] = SPList(
        id=lid,
        title=title,
        description=description,
        columns=[Column(name=n, type=t, choices=list(c)) for n, t, c in cols],  # type: ignore[arg-type]
    )
    return lists[lid]


class ListsService(Service[ListsState]):
    name = "lists"
    title = "Lists"
    domain = "productivity"

    @classmethod
    def generate_state(cls, rng: random.Random) -> ListsState:
        lists: dict[str, SPList] = {}
        items: dict[str, ListItem] = {}
        for title in rng.sample(sorted(TEMPLATES), 3):
            sp = _make_list(lists, title)
            for _ in range(rng.randint(2, 3)):
                iid = next_id("item", items)
                values = {c.name: _random_value(c, rng) for c in sp.columns}
                items[iid] = ListItem(id=iid, listId=sp.id, title=vocab.title(rng), values=values)
        return ListsState(lists=lists, items=items)

    def _list(self, list_id: str) -> SPList:
        sp = self.state.lists.get(list_id)
        if sp is None:
            raise not_found("list", list_id)
        return sp

    def _item(self, item_id: str) -> ListItem:
        item = self.state.items.get(item_id)
        if item is None:
            raise not_found("item", item_id)
        return item

    def _validated(self, sp: SPList, values: dict[str, Value]) -> dict[str, Value]:
        columns = {c.name: c for c in sp.columns}
        out = {}
        for name, value in values.items():
            if name not in columns:
                raise bad_request(f"unknown column '{name}'; columns: {', '.join(columns) or 'none'}")
            out[name] = _check(columns[name], value)
        return out

    @tool(writes=False)
    def list_lists(self, args: NoArgs) -> dict:
        """List every list with its columns and item count."""
        out = []
        for sp in self.state.lists.values():
            count = sum(i.listId == sp.id for i in self.state.items.values())
            out.append({**dump(sp), "itemCount": count})
        return {"lists": out}

    @tool(writes=False)
    def get_list(self, args: ListIdArgs) -> dict:
        """Get one list's definition: title, description and typed columns."""
        return {"list": dump(self._list(args.listId))}

    @tool(writes=False)
    def get_list_items(self, args: GetItemsArgs) -> dict:
        """Get the items of a list, optionally where one column equals a value."""
        sp = self._list(args.listId)
        found = [i for i in self.state.items.values() if i.listId == sp.id]
        if args.filterColumn is not None:
            column = args.filterColumn
            if column != "Title" and column not in {c.name for c in sp.columns}:
                raise bad_request(f"unknown column '{column}'")
            wanted = (args.filterValue or "").lower()
            found = [
                i
                for i in found
                if str(i.title if column == "Title" else i.values.get(column)).lower() == wanted
            ]
        return {"items": [dump(i) for i in found[: args.maxResults]]}

    @tool(writes=False)
    def get_item(self, args: ItemIdArgs) -> dict:
        """Get one list item by id."""
        return {"item": dump(self._item(args.itemId))}

    @tool(writes=False)
    def search_items(self, args: SearchItemsArgs) -> dict:
        """Search items by text in their title or any column value, optionally in one list."""
        q = args.query.lower().strip()
        if not q:
            raise bad_request("query must not be empty")
        if args.listId is not None:
            self._list(args.listId)
        hits = [
            i for i in self.state.items.values() if args.listId in (None, i.listId) and q in _item_text(i)
        ]
        return {"items": [dump(i) for i in hits]}

    @tool(writes=True)
    def create_item(self, args: CreateItemArgs) -> dict:
        """Add an item to a list; values are checked against the column types."""
        sp = self._list(args.listId)
        if not args.title.strip():
            raise bad_request("title must not be empty")
        iid = next_id("item", self.state.items)
        item = ListItem(id=iid, listId=sp.id, title=args.title, values=self._validated(sp, args.values))
        self.state.items[iid] = item
        return {"item": dump(item)}

    @tool(writes=True)
    def update_item(self, args: UpdateItemArgs) -> dict:
        """Update an item's title and/or some column values (others are kept)."""
        item = self._item(args.itemId)
        if args.title is None and not args.values:
            raise bad_request("nothing to update; give title or values")
        changes = self._validated(self.state.lists[item.listId], args.values or {})
        if args.title is not None:
            item.title = args.title
        item.values.update(changes)
        return {"item": dump(item)}

    @tool(writes=True)
    def set_item_field(self, args: SetFieldArgs) -> dict:
        """Set one column value of an item."""
        item = self._item(args.itemId)
        item.values.update(self._validated(self.state.lists[item.listId], {args.column: args.value}))
        return {"item": dump(item)}

    @tool(writes=True)
    def delete_item(self, args: ItemIdArgs) -> dict:
        """Delete a list item."""
        self._item(args.itemId)
        del self.state.items[args.itemId]
        return {"deleted": args.itemId}

    @tool(writes=True)
    def create_list(self, args: CreateListArgs) -> dict:
        """Create a new list with typed columns; titles are unique."""
        if not args.title.strip():
            raise bad_request("title must not be empty")
        if any(sp.title.lower() == args.title.lower() for sp in self.state.lists.values()):
            raise conflict(f"a list titled '{args.title}' already exists")
        names = [c.name for c in args.columns]
        if len(set(names)) != len(names) or "Title" in names:
            raise bad_request("column names must be unique and not 'Title'")
        for c in args.columns:
            if c.type == "choice" and not c.choices:
                raise bad_request(f"choice column '{c.name}' needs choices")
        lid = next_id("list", self.state.lists)
        self.state.lists[lid] = SPList(
            id=lid, title=args.title, description=args.description, columns=args.columns
        )
        return {"list": dump(self.state.lists[lid])}

    @tool(writes=True)
    def add_column(self, args: AddColumnArgs) -> dict:
        """Add a typed column to a list."""
        sp = self._list(args.listId)
        if args.name == "Title" or any(c.name == args.name for c in sp.columns):
            raise conflict(f"column '{args.name}' already exists in '{sp.title}'")
        if args.type == "choice" and not args.choices:
            raise bad_request("a choice column needs choices")
        sp.columns.append(Column(name=args.name, type=args.type, choices=args.choices))
        return {"list": dump(sp)}

    @classmethod
    def example_arguments(cls, state: ListsState) -> dict[str, dict]:
        sp = next(iter(state.lists.values()))
        item = next(i for i in state.items.values() if i.listId == sp.id)
        col = sp.columns[0]
        return {
            "list_lists": {},
            "get_list": {"listId": sp.id},
            "get_list_items": {"listId": sp.id, "filterColumn": "Title", "filterValue": item.title},
            "get_item": {"itemId": item.id},
            "search_items": {"query": item.title.split()[0], "listId": sp.id},
            "create_item": {
                "listId": sp.id,
                "title": "New entry",
                "values": {col.name: item.values[col.name]},
            },
            "update_item": {"itemId": item.id, "title": "Renamed entry"},
            "set_item_field": {"itemId": item.id, "column": col.name, "value": None},
            "delete_item": {"itemId": item.id},
            "create_list": {"title": "Onboarding", "columns": [{"name": "Start", "type": "date"}]},
            "add_column": {"listId": sp.id, "name": "Notes", "type": "text"},
        }

    @classmethod
    def links(cls) -> list[Link[ListsState]]:
        return [
            Hop(
                "traveler_destination",
                "person",
                "city",
                _plant_traveler_destination,
                relation="the destination city of the travel request of {of}",
            ),
            Hop(
                "project_due",
                "title",
                "date",
                _plant_project_due,
                relation="the due date of the project tracker item {of}",
            ),
            Hop(
                "asset_holder",
                "code",
                "person",
                _plant_asset_holder,
                relation="the assignee of the asset {of}",
            ),
            Hop(
                "vendor_email",
                "person",
                "email",
                _plant_vendor_email,
                relation="the email address of the vendor whose contact is {of}",
            ),
            Action("add_tracker_item", "title", _plant_add_tracker_item),
            Action("approve_trip", "person", _plant_approve_trip),
            Action("relocate_asset", "city", _plant_relocate_asset),
            Action("complete_tracker_item", "title", _plant_complete_tracker_item),
            Action("withdraw_trip", "person", _plant_withdraw_trip),
            Action("create_list", "title", _plant_create_list),
            Action("assign_reviewer_column", "person", _plant_reviewer_column),
        ]


def _ensure(state: ListsState, title: str) -> SPList:
    found = next((sp for sp in state.lists.values() if sp.title == title), None)
    return found or _make_list(state.lists, title)


def _drop_items(state: ListsState, text: str) -> None:
    """Make a lookup unambiguous: remove items whose title or values mention `text`."""
    low = text.lower()
    for iid in [i.id for i in state.items.values() if low in _item_text(i)]:
        del state.items[iid]


def _drop_trips(state: ListsState, traveler: str) -> None:
    """Make a Traveler filter unambiguous: remove that traveler's trips."""
    for iid in [
        i.id for i in state.items.values() if str(i.values.get("Traveler")).lower() == traveler.lower()
    ]:
        del state.items[iid]


def _plant_item(
    state: ListsState, rng: random.Random, list_title: str, title: str, **values: Value
) -> ListItem:
    sp = _ensure(state, list_title)
    filled = {c.name: values.get(c.name.replace(" ", "")) for c in sp.columns}
    for c in sp.columns:
        if filled[c.name] is None:
            filled[c.name] = _random_value(c, rng)
    iid = next_id("item", state.items)
    state.items[iid] = ListItem(id=iid, listId=sp.id, title=title, values=filled)
    return state.items[iid]


def _plant_traveler_destination(state: ListsState, rng: random.Random, value: str) -> HopPlan:
    _drop_trips(state, value)
    item = _plant_item(state, rng, "Travel Requests", f"Trip {vocab.code(rng, 'TR')}", Traveler=value)
    call = PlannedCall(
        "get_list_items",
        {"listId": item.listId, "filterColumn": "Traveler", "filterValue": value},
        inputs={"filterValue": "{value}"},
        reveals=("items", 0, "values", "Destination"),
    )
    return HopPlan(
        [call],
        str(item.values["Destination"]),
        "check that person's trip in the 'Travel Requests' list and note its destination city",
    )


def _plant_project_due(state: ListsState, rng: random.Random, value: str) -> HopPlan:
    _drop_items(state, value)
    item = _plant_item(state, rng, "Project Tracker", value)
    return query_hop(
        "search_items",
        value,
        ("items", 0, "values", "Due"),
        str(item.values["Due"]),
        "find the item with that title in the 'Project Tracker' list and note its due date",
    )


def _plant_asset_holder(state: ListsState, rng: random.Random, value: str) -> HopPlan:
    _drop_items(state, value)
    item = _plant_item(
        state, rng, "Asset Register", f"Laptop {rng.choice(vocab.WORDS).capitalize()}", Tag=value
    )
    call = PlannedCall(
        "search_items",
        {"query": value},
        inputs={"query": "{value}"},
        reveals=("items", 0, "values", "Assigned To"),
    )
    return HopPlan(
        [call],
        str(item.values["Assigned To"]),
        "find the asset with that reference code in the 'Asset Register' list and note who it is assigned to",
    )


def _plant_vendor_email(state: ListsState, rng: random.Random, value: str) -> HopPlan:
    _drop_items(state, value)
    email = vocab.email_for(value, rng)
    _drop_items(state, email)
    _plant_item(
        state, rng, "Vendors", f"{rng.choice(vocab.WORDS).capitalize()} Supplies", Contact=value, Email=email
    )
    return query_hop(
        "search_items",
        value,
        ("items", 0, "values", "Email"),
        email,
        "find the vendor whose contact is that person in the 'Vendors' list and note its email address",
    )


def _plant_add_tracker_item(state: ListsState, rng: random.Random, value: str) -> ActionPlan:
    _drop_items(state, value)
    sp = _ensure(state, "Project Tracker")
    call = PlannedCall(
        "create_item",
        {"listId": sp.id, "title": value, "values": {"Status": "Not started"}},
        inputs={"title": "{value}"},
    )
    crit = expect_record("items", f"'Project Tracker' has the item '{value}'", listId=sp.id, title=value)
    return ActionPlan(
        [call], [crit], "add an item with that title and status 'Not started' to the 'Project Tracker' list"
    )


def _plant_approve_trip(state: ListsState, rng: random.Random, value: str) -> ActionPlan:
    _drop_trips(state, value)
    item = _plant_item(state, rng, "Travel Requests", f"Trip {vocab.code(rng, 'TR')}", Traveler=value)
    item.values["Approved"] = False
    calls = [
        PlannedCall(
            "get_list_items",
            {"listId": item.listId, "filterColumn": "Traveler", "filterValue": value},
            inputs={"filterValue": "{value}"},
        ),
        PlannedCall(
            "set_item_field",
            {"itemId": None, "column": "Approved", "value": True},
            bind={"itemId": (0, ("items", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "items", f"{value}'s trip is approved", title=item.title, values=("icontains", "'approved': true")
    )
    return ActionPlan(
        calls, [crit], "approve that person's trip in the 'Travel Requests' list (set Approved to true)"
    )


def _plant_relocate_asset(state: ListsState, rng: random.Random, value: str) -> ActionPlan:
    title = f"Monitor {vocab.code(rng, 'MON')}"
    _drop_items(state, title)
    _plant_item(
        state, rng, "Asset Register", title, Location=next(c[0] for c in vocab.CITIES if c[0] != value)
    )
    calls = [
        PlannedCall("search_items", {"query": title}),
        PlannedCall(
            "set_item_field",
            {"itemId": None, "column": "Location", "value": value},
            inputs={"value": "{value}"},
            bind={"itemId": (0, ("items", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "items",
        f"the asset '{title}' is located in {value}",
        title=title,
        values=("icontains", f"'location': '{value}'"),
    )
    return ActionPlan(
        calls, [crit], f"set the location of the asset '{title}' in the 'Asset Register' list to that city"
    )


def _plant_complete_tracker_item(state: ListsState, rng: random.Random, value: str) -> ActionPlan:
    _drop_items(state, value)
    item = _plant_item(state, rng, "Project Tracker", value, Status="In progress")
    budget = float(rng.randint(4, 40) * 1000)
    item.values["Budget"] = budget + 250.0
    calls = [
        PlannedCall("search_items", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall("get_list", {"listId": None}, bind={"listId": (0, ("items", 0, "listId"))}),
        PlannedCall(
            "update_item",
            {"itemId": None, "values": {"Status": "Done", "Budget": budget}},
            bind={"itemId": (0, ("items", 0, "id"))},
        ),
    ]
    criteria = [
        expect_record(
            "items",
            f"the tracker item '{value}' is Done",
            id=item.id,
            title=value,
            values=("icontains", "'status': 'done'"),
        ),
        expect_record(
            "items",
            f"the tracker item '{value}' has the budget {budget:.0f}",
            id=item.id,
            title=value,
            values=("icontains", f"'budget': {budget}"),
        ),
    ]
    phrase = (
        "in the 'Project Tracker' list, set the item with that title to status 'Done' "
        f"and its budget to {budget:.0f}"
    )
    return ActionPlan(calls, criteria, phrase)


def _plant_withdraw_trip(state: ListsState, rng: random.Random, value: str) -> ActionPlan:
    _drop_trips(state, value)
    item = _plant_item(state, rng, "Travel Requests", f"Trip {vocab.code(rng, 'TR')}", Traveler=value)
    calls = [
        PlannedCall(
            "get_list_items",
            {"listId": item.listId, "filterColumn": "Traveler", "filterValue": value},
            inputs={"filterValue": "{value}"},
        ),
        PlannedCall("delete_item", {"itemId": None}, bind={"itemId": (0, ("items", 0, "id"))}),
    ]
    crit = expect_record(
        "items",
        f"{value}'s travel request '{item.title}' is deleted",
        absent=True,
        id=item.id,
        title=item.title,
    )
    return ActionPlan(calls, [crit], "delete that person's trip from the 'Travel Requests' list")


def _plant_create_list(state: ListsState, rng: random.Random, value: str) -> ActionPlan:
    for lid in [sp.id for sp in state.lists.values() if sp.title.lower() == value.lower()]:
        del state.lists[lid]
        for iid in [i.id for i in state.items.values() if i.listId == lid]:
            del state.items[iid]
    columns = [{"name": "Owner", "type": "person"}, {"name": "Due", "type": "date"}]
    call = PlannedCall(
        "create_list",
        {"title": value, "description": "Action items", "columns": columns},
        inputs={"title": "{value}"},
    )
    criteria = [
        expect_record(
            "lists",
            f"a list titled '{value}' has an Owner column",
            title=value,
            columns=("icontains", "'owner'"),
        ),
        expect_record(
            "lists", f"a list titled '{value}' has a Due column", title=value, columns=("icontains", "'due'")
        ),
    ]
    phrase = "create a new list with that title, with a person column 'Owner' and a date column 'Due'"
    return ActionPlan([call], criteria, phrase)


def _plant_reviewer_column(state: ListsState, rng: random.Random, value: str) -> ActionPlan:
    title = vocab.unique(rng, vocab.title, {i.title for i in state.items.values()})
    _drop_items(state, title)
    item = _plant_item(state, rng, "Project Tracker", title)
    sp = state.lists[item.listId]
    column = rng.choice(
        [n for n in ("Reviewer", "Approver", "Sponsor") if n not in {c.name for c in sp.columns}]
    )
    calls = [
        PlannedCall("search_items", {"query": title}),
        PlannedCall(
            "add_column",
            {"listId": None, "name": column, "type": "person"},
            bind={"listId": (0, ("items", 0, "listId"))},
        ),
        PlannedCall(
            "set_item_field",
            {"itemId": None, "column": column, "value": value},
            inputs={"value": "{value}"},
            bind={"itemId": (0, ("items", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "items",
        f"the tracker item '{title}' has {value} as its {column}",
        id=item.id,
        title=title,
        values=("icontains", f"'{column}': '{value}'"),
    )
    phrase = (
        f"add a person column '{column}' to the 'Project Tracker' list and set it to that person "
        f"on the item '{title}'"
    )
    return ActionPlan(calls, [crit], phrase)


register_service(ListsService)
