"""Todo service (task manager): task lists and to-do items with due dates, priorities and assignees."""

from __future__ import annotations

import random
from datetime import date as Date
from typing import Annotated

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

LIST_NAMES = ("Work", "Personal", "Groceries", "Home Projects", "Errands", "Reading")
PRIORITIES = ("low", "medium", "high")


class TaskList(Record):
    id: str
    name: str


class TodoItem(Record):
    id: str
    listId: str
    title: str
    due: str | None = None
    priority: str = "medium"
    completed: bool = False
    assignee: str = ""
    notes: str = ""


class TodoState(Strict):
    lists: dict[str, TaskList] = {}
    items: dict[str, TodoItem] = {}


class NoArgs(ToolArgs):
    pass


class ListNameArgs(ToolArgs):
    name: Annotated[str, Field(description="list name")]


class RenameListArgs(ToolArgs):
    listId: Annotated[str, Field(description="task list id")]
    name: Annotated[str, Field(description="new list name")]


class ListIdArgs(ToolArgs):
    listId: Annotated[str, Field(description="task list id")]


class ListItemsArgs(ToolArgs):
    listId: Annotated[str | None, Field(description="only items of this task list")] = None
    due: Annotated[str | None, Field(description="only items due on this day (YYYY-MM-DD)")] = None
    assignee: Annotated[str | None, Field(description="only items assigned to this person (full name)")] = (
        None
    )
    completed: Annotated[bool | None, Field(description="only completed (true) or open (false) items")] = None


class SearchItemsArgs(ToolArgs):
    query: Annotated[str, Field(description="text searched in item titles and notes")]


class ItemIdArgs(ToolArgs):
    itemId: Annotated[str, Field(description="to-do item id")]


class AddItemArgs(ToolArgs):
    listId: Annotated[str, Field(description="task list id")]
    title: Annotated[str, Field(description="what needs doing")]
    due: Annotated[str | None, Field(description="due day (YYYY-MM-DD)")] = None
    priority: Annotated[str, Field(description="low, medium or high")] = "medium"
    assignee: Annotated[str, Field(description="person responsible (full name)")] = ""
    notes: Annotated[str, Field(description="free text")] = ""


class UpdateItemArgs(ToolArgs):
    itemId: Annotated[str, Field(description="to-do item id")]
    title: Annotated[str | None, Field(description="new title")] = None
    due: Annotated[str | None, Field(description="new due day (YYYY-MM-DD)")] = None
    priority: Annotated[str | None, Field(description="new priority: low, medium or high")] = None
    notes: Annotated[str | None, Field(description="new notes")] = None


class AssignArgs(ToolArgs):
    itemId: Annotated[str, Field(description="to-do item id")]
    assignee: Annotated[str, Field(description="person responsible (full name)")]


def _check_due(due: str | None) -> None:
    if due is None:
        return
    try:
        Date.fromisoformat(due)
    except ValueError:
        raise bad_request(f"invalid due date '{due}': use YYYY-MM-DD") from None


def _check_priority(priority: str | None) -> None:
    if priority is not None and priority not in PRIORITIES:
        raise bad_request("priority must be low, medium or high")


class TodoService(Service[TodoState]):
    name = "todo"
    title = "To-Do"
    domain = "productivity"

    @classmethod
    def generate_state(cls, rng: random.Random) -> TodoState:
        lists: dict[str, TaskList] = {}
        for name in rng.sample(LIST_NAMES, rng.randint(2, 4)):
            lid = next_id("lst", lists)
            lists[lid] = TaskList(id=lid, name=name)
        items: dict[str, TodoItem] = {}
        for i in range(rng.randint(4, 9)):
            iid = next_id("tsk", items)
            items[iid] = TodoItem(
                id=iid,
                listId=rng.choice(list(lists)),
                title=vocab.title(rng),
                due=vocab.date(rng),
                priority=rng.choice(PRIORITIES),
                completed=i % 3 == 2,
                assignee=vocab.person_name(rng),
                notes=vocab.sentence(rng),
            )
        return TodoState(lists=lists, items=items)

    def _list(self, list_id: str) -> TaskList:
        task_list = self.state.lists.get(list_id)
        if task_list is None:
            raise not_found("task list", list_id)
        return task_list

    def _item(self, item_id: str) -> TodoItem:
        item = self.state.items.get(item_id)
        if item is None:
            raise not_found("to-do item", item_id)
        return item

    def _check_list_name(self, name: str) -> None:
        if not name.strip():
            raise bad_request("name must not be empty")
        if any(x.name.lower() == name.strip().lower() for x in self.state.lists.values()):
            raise conflict(f"a task list named '{name}' already exists")

    @tool(writes=False)
    def list_lists(self, args: NoArgs) -> dict:
        """List all task lists with their number of open items."""
        open_counts = {lid: 0 for lid in self.state.lists}
        for item in self.state.items.values():
            if not item.completed and item.listId in open_counts:
                open_counts[item.listId] += 1
        return {"lists": [{**dump(x), "openItems": open_counts[x.id]} for x in self.state.lists.values()]}

    @tool(writes=True)
    def create_list(self, args: ListNameArgs) -> dict:
        """Create a task list; names are unique."""
        self._check_list_name(args.name)
        lid = next_id("lst", self.state.lists)
        task_list = TaskList(id=lid, name=args.name.strip())
        self.state.lists[lid] = task_list
        return {"list": dump(task_list)}

    @tool(writes=True)
    def rename_list(self, args: RenameListArgs) -> dict:
        """Rename a task list."""
        task_list = self._list(args.listId)
        self._check_list_name(args.name)
        task_list.name = args.name.strip()
        return {"list": dump(task_list)}

    @tool(writes=True)
    def delete_list(self, args: ListIdArgs) -> dict:
        """Delete a task list together with all its items."""
        self._list(args.listId)
        del self.state.lists[args.listId]
        removed = [i for i, item in self.state.items.items() if item.listId == args.listId]
        for iid in removed:
            del self.state.items[iid]
        return {"deleted": args.listId, "deletedItems": removed}

    @tool(writes=False)
    def list_items(self, args: ListItemsArgs) -> dict:
        """List to-do items, filtered by list, due day, assignee and/or completion."""
        if args.listId is not None:
            self._list(args.listId)
        who = (args.assignee or "").strip().lower()
        hits = [
            i
            for i in self.state.items.values()
            if (args.listId is None or i.listId == args.listId)
            and (args.due is None or i.due == args.due)
            and (not who or i.assignee.lower() == who)
            and (args.completed is None or i.completed == args.completed)
        ]
        return {"items": [dump(i) for i in hits]}

    @tool(writes=False)
    def search_items(self, args: SearchItemsArgs) -> dict:
        """Search to-do items by text in their title or notes."""
        q = args.query.lower().strip()
        if not q:
            raise bad_request("query must not be empty")
        return {"items": [dump(i) for i in self.state.items.values() if q in f"{i.title} {i.notes}".lower()]}

    @tool(writes=False)
    def get_item(self, args: ItemIdArgs) -> dict:
        """Get one to-do item by id."""
        return {"item": dump(self._item(args.itemId))}

    @tool(writes=True)
    def add_item(self, args: AddItemArgs) -> dict:
        """Add a to-do item to a list, with an optional due day, priority and assignee."""
        self._list(args.listId)
        if not args.title.strip():
            raise bad_request("title must not be empty")
        _check_due(args.due)
        _check_priority(args.priority)
        iid = next_id("tsk", self.state.items)
        item = TodoItem(id=iid, **args.model_dump())
        self.state.items[iid] = item
        return {"item": dump(item)}

    @tool(writes=True)
    def update_item(self, args: UpdateItemArgs) -> dict:
        """Update an item's title, due day, priority or notes."""
        item = self._item(args.itemId)
        changes = {
            f: getattr(args, f) for f in ("title", "due", "priority", "notes") if getattr(args, f) is not None
        }
        if not changes:
            raise bad_request("nothing to update; updatable fields: title, due, priority, notes")
        _check_due(changes.get("due"))
        _check_priority(changes.get("priority"))
        for name, value in changes.items():
            setattr(item, name, value)
        return {"item": dump(item), "updated": sorted(changes)}

    @tool(writes=True)
    def complete_item(self, args: ItemIdArgs) -> dict:
        """Mark an open item as completed."""
        item = self._item(args.itemId)
        if item.completed:
            raise conflict(f"item '{item.title}' is already completed")
        item.completed = True
        return {"item": dump(item)}

    @tool(writes=True)
    def reopen_item(self, args: ItemIdArgs) -> dict:
        """Mark a completed item as open again."""
        item = self._item(args.itemId)
        if not item.completed:
            raise conflict(f"item '{item.title}' is not completed")
        item.completed = False
        return {"item": dump(item)}

    @tool(writes=True)
    def assign_item(self, args: AssignArgs) -> dict:
        """Assign an item to a person (full name)."""
        item = self._item(args.itemId)
        if not args.assignee.strip():
            raise bad_request("assignee must not be empty")
        item.assignee = args.assignee.strip()
        return {"item": dump(item)}

    @tool(writes=True)
    def delete_item(self, args: ItemIdArgs) -> dict:
        """Delete a to-do item."""
        self._item(args.itemId)
        del self.state.items[args.itemId]
        return {"deleted": args.itemId}

    @classmethod
    def example_arguments(cls, state: TodoState) -> dict[str, dict]:
        items = list(state.items.values())
        first, done = items[0], items[2]
        return {
            "list_lists": {},
            "create_list": {"name": "Garden"},
            "rename_list": {"listId": first.listId, "name": "Renamed"},
            "delete_list": {"listId": first.listId},
            "list_items": {"listId": first.listId, "completed": False},
            "search_items": {"query": first.title.split()[0]},
            "get_item": {"itemId": first.id},
            "add_item": {
                "listId": first.listId,
                "title": "Call the plumber",
                "due": "2026-07-01",
                "priority": "high",
            },
            "update_item": {"itemId": first.id, "notes": "moved to next week"},
            "complete_item": {"itemId": first.id},
            "reopen_item": {"itemId": done.id},
            "assign_item": {"itemId": first.id, "assignee": "Rui Costa"},
            "delete_item": {"itemId": first.id},
        }

    @classmethod
    def links(cls) -> list[Link[TodoState]]:
        return [
            Hop(
                "item_due_date",
                "title",
                "date",
                _plant_item_due,
                relation="the due date of the to-do item {of}",
            ),
            Hop(
                "item_due_assignee",
                "date",
                "person",
                _plant_due_assignee,
                relation="the person assigned the to-do item due on {of}",
            ),
            Hop(
                "assignee_item",
                "person",
                "title",
                _plant_assignee_item,
                relation="the title of the to-do item assigned to {of}",
            ),
            Action("complete_item", "title", _plant_complete),
            Action("add_item_due", "date", _plant_add_due),
            Action("assign_item", "person", _plant_assign),
            Action("create_trip_list", "city", _plant_create_list),
            Action("rename_list_to_title", "title", _plant_rename_list),
            Action("delete_list_of_due_item", "date", _plant_delete_list),
            Action("delete_item_of_person", "person", _plant_delete_item),
            Action("reopen_item_by_title", "title", _plant_reopen),
            Action("reschedule_item", "date", _plant_reschedule),
        ]


def _drop_items(state: TodoState, text: str) -> None:
    low = text.lower()
    for iid in [i.id for i in state.items.values() if low in f"{i.title} {i.notes}".lower()]:
        del state.items[iid]


def _any_list(state: TodoState) -> TaskList:
    if not state.lists:
        state.lists["lst_1"] = TaskList(id="lst_1", name="Work")
    return next(iter(state.lists.values()))


def _new_item(state: TodoState, rng: random.Random, **fields) -> TodoItem:
    iid = next_id("tsk", state.items)
    fields.setdefault("title", vocab.title(rng))
    fields.setdefault("due", vocab.date(rng))
    fields.setdefault("assignee", vocab.person_name(rng))
    fields.setdefault("priority", rng.choice(PRIORITIES))
    fields.setdefault("listId", _any_list(state).id)
    item = TodoItem(id=iid, **fields)
    state.items[iid] = item
    return item


def _fresh_title(state: TodoState, rng: random.Random) -> str:
    name = vocab.title(rng)
    _drop_items(state, name)
    return name


def _plant_item_due(state: TodoState, rng: random.Random, value: str) -> HopPlan:
    _drop_items(state, value)
    item = _new_item(state, rng, title=value)
    return query_hop(
        "search_items",
        value,
        ("items", 0, "due"),
        item.due or "",
        "find the to-do item with that title and note its due date",
    )


def _plant_due_assignee(state: TodoState, rng: random.Random, value: str) -> HopPlan:
    for iid in [i.id for i in state.items.values() if i.due == value]:
        del state.items[iid]
    item = _new_item(state, rng, title=_fresh_title(state, rng), due=value)
    call = PlannedCall(
        "list_items", {"due": value}, inputs={"due": "{value}"}, reveals=("items", 0, "assignee")
    )
    return HopPlan(
        [call], item.assignee, "check which to-do item is due on that date and note who it is assigned to"
    )


def _plant_assignee_item(state: TodoState, rng: random.Random, value: str) -> HopPlan:
    for iid in [i.id for i in state.items.values() if i.assignee.lower() == value.lower()]:
        del state.items[iid]
    item = _new_item(state, rng, title=_fresh_title(state, rng), assignee=value)
    call = PlannedCall(
        "list_items", {"assignee": value}, inputs={"assignee": "{value}"}, reveals=("items", 0, "title")
    )
    return HopPlan([call], item.title, "find the to-do item assigned to that person and note its title")


def _plant_complete(state: TodoState, rng: random.Random, value: str) -> ActionPlan:
    _drop_items(state, value)
    _new_item(state, rng, title=value)
    calls = [
        PlannedCall("search_items", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall("complete_item", {"itemId": None}, bind={"itemId": (0, ("items", 0, "id"))}),
    ]
    crit = expect_record("items", f"the to-do '{value}' is completed", title=value, completed=True)
    return ActionPlan(calls, [crit], "mark the to-do item with that title as completed")


def _plant_add_due(state: TodoState, rng: random.Random, value: str) -> ActionPlan:
    task_list = _any_list(state)
    name = _fresh_title(state, rng)
    call = PlannedCall(
        "add_item", {"listId": task_list.id, "title": name, "due": value}, inputs={"due": "{value}"}
    )
    crit = expect_record(
        "items", f"a to-do '{name}' is due on {value}", title=name, due=value, listId=task_list.id
    )
    return ActionPlan(
        [call], [crit], f"add a to-do item '{name}' due on that date to the '{task_list.name}' list"
    )


def _plant_assign(state: TodoState, rng: random.Random, value: str) -> ActionPlan:
    name = _fresh_title(state, rng)
    _new_item(state, rng, title=name)
    calls = [
        PlannedCall("search_items", {"query": name}),
        PlannedCall(
            "assign_item",
            {"itemId": None, "assignee": value},
            inputs={"assignee": "{value}"},
            bind={"itemId": (0, ("items", 0, "id"))},
        ),
    ]
    crit = expect_record("items", f"the to-do '{name}' is assigned to {value}", title=name, assignee=value)
    return ActionPlan(calls, [crit], f"assign the to-do item '{name}' to that person")


def _fresh_list(state: TodoState, rng: random.Random) -> TaskList:
    """A new task list with a name no other list has."""
    taken = {x.name.lower() for x in state.lists.values()}
    name = f"Project {vocab.code(rng, 'PRJ')}"
    while name.lower() in taken:
        name = f"Project {vocab.code(rng, 'PRJ')}"
    lid = next_id("lst", state.lists)
    state.lists[lid] = TaskList(id=lid, name=name)
    return state.lists[lid]


def _plant_create_list(state: TodoState, rng: random.Random, value: str) -> ActionPlan:
    name = f"{value} Trip"
    taken = [x.id for x in state.lists.values() if x.name.lower() == name.lower()]
    for lid in taken:
        del state.lists[lid]
    for iid in [i.id for i in state.items.values() if i.listId in taken]:
        del state.items[iid]
    call = PlannedCall("create_list", {"name": name}, inputs={"name": "{value} Trip"})
    crit = expect_record("lists", f"a task list '{name}' exists", name=name)
    return ActionPlan([call], [crit], "create a task list named after that city followed by the word 'Trip'")


def _plant_rename_list(state: TodoState, rng: random.Random, value: str) -> ActionPlan:
    task_list = _fresh_list(state, rng)
    for other in state.lists.values():
        if other.id != task_list.id and other.name.lower() == value.lower():
            other.name = f"{other.name} (old)"
    calls = [
        PlannedCall("list_lists", {}),
        PlannedCall("rename_list", {"listId": task_list.id, "name": value}, inputs={"name": "{value}"}),
    ]
    crit = expect_record(
        "lists", f"the list '{task_list.name}' is renamed to '{value}'", id=task_list.id, name=value
    )
    return ActionPlan(calls, [crit], f"rename the task list '{task_list.name}' to that title")


def _plant_delete_list(state: TodoState, rng: random.Random, value: str) -> ActionPlan:
    for iid in [i.id for i in state.items.values() if i.due == value]:
        del state.items[iid]
    task_list = _fresh_list(state, rng)
    _new_item(state, rng, title=_fresh_title(state, rng), due=value, listId=task_list.id)
    calls = [
        PlannedCall("list_items", {"due": value}, inputs={"due": "{value}"}),
        PlannedCall("delete_list", {"listId": None}, bind={"listId": (0, ("items", 0, "listId"))}),
    ]
    crit = expect_record(
        "lists",
        f"the task list '{task_list.name}' is deleted",
        absent=True,
        id=task_list.id,
        name=task_list.name,
    )
    phrase = "delete the task list (with its items) that holds the to-do item due on that date"
    return ActionPlan(calls, [crit], phrase)


def _plant_delete_item(state: TodoState, rng: random.Random, value: str) -> ActionPlan:
    for iid in [i.id for i in state.items.values() if i.assignee.lower() == value.lower()]:
        del state.items[iid]
    item = _new_item(state, rng, title=_fresh_title(state, rng), assignee=value)
    calls = [
        PlannedCall("list_items", {"assignee": value}, inputs={"assignee": "{value}"}),
        PlannedCall("delete_item", {"itemId": None}, bind={"itemId": (0, ("items", 0, "id"))}),
    ]
    crit = expect_record(
        "items", f"the to-do '{item.title}' is deleted", absent=True, id=item.id, title=item.title
    )
    return ActionPlan(calls, [crit], "delete the to-do item assigned to that person")


def _plant_reopen(state: TodoState, rng: random.Random, value: str) -> ActionPlan:
    _drop_items(state, value)
    _new_item(state, rng, title=value, completed=True)
    calls = [
        PlannedCall("search_items", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall("reopen_item", {"itemId": None}, bind={"itemId": (0, ("items", 0, "id"))}),
    ]
    crit = expect_record("items", f"the to-do '{value}' is open again", title=value, completed=False)
    return ActionPlan(calls, [crit], "reopen the completed to-do item with that title")


def _plant_reschedule(state: TodoState, rng: random.Random, value: str) -> ActionPlan:
    name = _fresh_title(state, rng)
    due = vocab.date(rng)
    while due == value:
        due = vocab.date(rng)
    _new_item(state, rng, title=name, due=due)
    calls = [
        PlannedCall("search_items", {"query": name}),
        PlannedCall(
            "update_item",
            {"itemId": None, "due": value},
            inputs={"due": "{value}"},
            bind={"itemId": (0, ("items", 0, "id"))},
        ),
    ]
    crit = expect_record("items", f"the to-do '{name}' is due on {value}", title=name, due=value)
    return ActionPlan(calls, [crit], f"move the due date of the to-do item '{name}' to that date")


register_service(TodoService)
