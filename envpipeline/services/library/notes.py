"""Notes service (Evernote/OneNote-like): notes with titles, tags, locations and reminders in notebooks."""

from __future__ import annotations

import random
import re
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

NOW = "2026-05-15T10:00"
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
NOTEBOOKS = ("Personal", "Work", "Travel", "Recipes", "Meetings", "Ideas")
TAGS = ("todo", "idea", "meeting", "travel", "finance", "reading", "draft")


class Notebook(Record):
    id: str
    name: str


class Note(Record):
    id: str
    notebookId: str
    title: str
    body: str = ""
    tags: list[str] = []
    location: str = ""
    reminder: str | None = None
    pinned: bool = False
    archived: bool = False
    updated: str = NOW


class NotesState(Strict):
    notebooks: dict[str, Notebook] = {}
    notes: dict[str, Note] = {}


class NoArgs(ToolArgs):
    pass


class NameArgs(ToolArgs):
    name: Annotated[str, Field(description="notebook name")]


class ListNotesArgs(ToolArgs):
    notebookId: Annotated[str | None, Field(description="only notes in this notebook")] = None
    tag: Annotated[str | None, Field(description="only notes carrying this tag")] = None
    includeArchived: Annotated[bool, Field(description="also list archived notes")] = False


class NoteIdArgs(ToolArgs):
    noteId: Annotated[str, Field(description="note id")]


class QueryArgs(ToolArgs):
    query: Annotated[str, Field(description="text searched in title, body and tags")]


class CreateNoteArgs(ToolArgs):
    title: Annotated[str, Field(description="note title")]
    body: Annotated[str, Field(description="note text")] = ""
    notebookId: Annotated[str | None, Field(description="notebook id (default: the first notebook)")] = None
    tags: Annotated[list[str], Field(description="tags to attach")] = []


class UpdateNoteArgs(ToolArgs):
    noteId: Annotated[str, Field(description="note id")]
    title: Annotated[str | None, Field(description="new title")] = None
    body: Annotated[str | None, Field(description="new text (replaces the old one)")] = None
    location: Annotated[str | None, Field(description="new location (city)")] = None
    reminder: Annotated[str | None, Field(description="new reminder date (YYYY-MM-DD)")] = None


class AppendArgs(ToolArgs):
    noteId: Annotated[str, Field(description="note id")]
    text: Annotated[str, Field(description="text appended as a new paragraph")]


class TagArgs(ToolArgs):
    noteId: Annotated[str, Field(description="note id")]
    tag: Annotated[str, Field(description="tag name")]


class MoveArgs(ToolArgs):
    noteId: Annotated[str, Field(description="note id")]
    notebookId: Annotated[str, Field(description="destination notebook id")]


class PinArgs(ToolArgs):
    noteId: Annotated[str, Field(description="note id")]
    pinned: Annotated[bool, Field(description="true pins, false unpins")] = True


class NotesService(Service[NotesState]):
    name = "notes"
    title = "Notes"
    domain = "productivity"

    @classmethod
    def generate_state(cls, rng: random.Random) -> NotesState:
        notebooks: dict[str, Notebook] = {}
        for name in rng.sample(NOTEBOOKS, rng.randint(3, 4)):
            nid = next_id("nb", notebooks)
            notebooks[nid] = Notebook(id=nid, name=name)
        notes: dict[str, Note] = {}
        for i in range(rng.randint(5, 9)):
            nid = next_id("note", notes)
            notes[nid] = Note(
                id=nid,
                notebookId=rng.choice(list(notebooks)),
                title=vocab.title(rng),
                body=vocab.sentence(rng),
                tags=rng.sample(TAGS, rng.randint(1, 2)),
                location=vocab.city(rng)[0] if rng.random() < 0.5 else "",
                reminder=vocab.date(rng) if rng.random() < 0.3 else None,
                pinned=i > 0 and rng.random() < 0.2,
                updated=f"{vocab.date(rng)}T{rng.randint(7, 21):02d}:00",
            )
        return NotesState(notebooks=notebooks, notes=notes)

    def _note(self, note_id: str) -> Note:
        note = self.state.notes.get(note_id)
        if note is None:
            raise not_found("note", note_id)
        return note

    def _notebook(self, notebook_id: str) -> Notebook:
        notebook = self.state.notebooks.get(notebook_id)
        if notebook is None:
            raise not_found("notebook", notebook_id)
        return notebook

    @tool(writes=False)
    def list_notebooks(self, args: NoArgs) -> dict:
        """List notebooks with how many notes each holds."""
        out = []
        for nb in self.state.notebooks.values():
            count = sum(n.notebookId == nb.id and not n.archived for n in self.state.notes.values())
            out.append({**dump(nb), "noteCount": count})
        return {"notebooks": out}

    @tool(writes=True)
    def create_notebook(self, args: NameArgs) -> dict:
        """Create a notebook; names are unique."""
        name = args.name.strip()
        if not name:
            raise bad_request("name must not be empty")
        if any(nb.name.lower() == name.lower() for nb in self.state.notebooks.values()):
            raise conflict(f"a notebook named '{name}' already exists")
        nid = next_id("nb", self.state.notebooks)
        self.state.notebooks[nid] = Notebook(id=nid, name=name)
        return {"notebook": dump(self.state.notebooks[nid])}

    @tool(writes=False)
    def list_notes(self, args: ListNotesArgs) -> dict:
        """List notes (pinned first), optionally of one notebook or carrying one tag."""
        if args.notebookId is not None:
            self._notebook(args.notebookId)
        tag = (args.tag or "").lower().strip()
        found = [
            n
            for n in self.state.notes.values()
            if (args.includeArchived or not n.archived)
            and args.notebookId in (None, n.notebookId)
            and (not tag or tag in (t.lower() for t in n.tags))
        ]
        found.sort(key=lambda n: not n.pinned)
        return {"notes": [dump(n) for n in found]}

    @tool(writes=False)
    def get_note(self, args: NoteIdArgs) -> dict:
        """Get one note by id."""
        return {"note": dump(self._note(args.noteId))}

    @tool(writes=False)
    def search_notes(self, args: QueryArgs) -> dict:
        """Search notes (archived included) by text in title, body or tags."""
        q = args.query.lower().strip()
        if not q:
            raise bad_request("query must not be empty")
        return {"notes": [dump(n) for n in self.state.notes.values() if q in _note_text(n)]}

    @tool(writes=True)
    def create_note(self, args: CreateNoteArgs) -> dict:
        """Create a note in a notebook (the first notebook by default)."""
        if not args.title.strip():
            raise bad_request("title must not be empty")
        if args.notebookId is not None:
            notebook_id = self._notebook(args.notebookId).id
        elif self.state.notebooks:
            notebook_id = next(iter(self.state.notebooks))
        else:
            raise bad_request("no notebook exists; create one first")
        nid = next_id("note", self.state.notes)
        tags = list(dict.fromkeys(t.strip() for t in args.tags if t.strip()))
        note = Note(id=nid, notebookId=notebook_id, title=args.title, body=args.body, tags=tags)
        self.state.notes[nid] = note
        return {"note": dump(note)}

    @tool(writes=True)
    def update_note(self, args: UpdateNoteArgs) -> dict:
        """Update a note's title, body, location or reminder date (only the given fields)."""
        note = self._note(args.noteId)
        changes = {
            f: getattr(args, f)
            for f in ("title", "body", "location", "reminder")
            if getattr(args, f) is not None
        }
        if not changes:
            raise bad_request("nothing to update; updatable fields: title, body, location, reminder")
        if "reminder" in changes and not DATE_RE.match(changes["reminder"]):
            raise bad_request("reminder must be a date YYYY-MM-DD")
        for name, value in changes.items():
            setattr(note, name, value)
        note.updated = NOW
        return {"note": dump(note), "updated": sorted(changes)}

    @tool(writes=True)
    def append_to_note(self, args: AppendArgs) -> dict:
        """Append a paragraph of text to a note."""
        note = self._note(args.noteId)
        if not args.text.strip():
            raise bad_request("text must not be empty")
        note.body = f"{note.body}\n\n{args.text}" if note.body else args.text
        note.updated = NOW
        return {"note": dump(note)}

    @tool(writes=True)
    def add_tag(self, args: TagArgs) -> dict:
        """Add a tag to a note."""
        note = self._note(args.noteId)
        tag = args.tag.strip()
        if not tag:
            raise bad_request("tag must not be empty")
        if tag.lower() in (t.lower() for t in note.tags):
            raise conflict(f"note {note.id} already has the tag '{tag}'")
        note.tags.append(tag)
        return {"note": dump(note)}

    @tool(writes=True)
    def remove_tag(self, args: TagArgs) -> dict:
        """Remove a tag from a note."""
        note = self._note(args.noteId)
        match = next((t for t in note.tags if t.lower() == args.tag.strip().lower()), None)
        if match is None:
            raise not_found("tag", args.tag)
        note.tags.remove(match)
        return {"note": dump(note)}

    @tool(writes=True)
    def move_note(self, args: MoveArgs) -> dict:
        """Move a note to another notebook."""
        note = self._note(args.noteId)
        self._notebook(args.notebookId)
        if note.notebookId == args.notebookId:
            raise conflict(f"note {note.id} is already in notebook {args.notebookId}")
        note.notebookId = args.notebookId
        return {"note": dump(note)}

    @tool(writes=True)
    def pin_note(self, args: PinArgs) -> dict:
        """Pin a note to the top of the list (or unpin it with pinned=false)."""
        note = self._note(args.noteId)
        note.pinned = args.pinned
        return {"note": dump(note)}

    @tool(writes=True)
    def archive_note(self, args: NoteIdArgs) -> dict:
        """Archive a note: it is hidden from lists but still searchable."""
        note = self._note(args.noteId)
        if note.archived:
            raise conflict(f"note {note.id} is already archived")
        note.archived = True
        return {"note": dump(note)}

    @tool(writes=True)
    def delete_note(self, args: NoteIdArgs) -> dict:
        """Delete a note permanently."""
        self._note(args.noteId)
        del self.state.notes[args.noteId]
        return {"deleted": args.noteId}

    @classmethod
    def example_arguments(cls, state: NotesState) -> dict[str, dict]:
        note = next(iter(state.notes.values()))
        other = next(nb for nb in state.notebooks if nb != note.notebookId)
        return {
            "list_notebooks": {},
            "create_notebook": {"name": "Garden"},
            "list_notes": {"notebookId": note.notebookId, "tag": note.tags[0]},
            "get_note": {"noteId": note.id},
            "search_notes": {"query": note.title.split()[0]},
            "create_note": {"title": "Groceries", "body": "Milk, eggs.", "tags": ["todo"]},
            "update_note": {"noteId": note.id, "reminder": "2026-09-01"},
            "append_to_note": {"noteId": note.id, "text": "Follow up next week."},
            "add_tag": {"noteId": note.id, "tag": "important"},
            "remove_tag": {"noteId": note.id, "tag": note.tags[0]},
            "move_note": {"noteId": note.id, "notebookId": other},
            "pin_note": {"noteId": note.id, "pinned": True},
            "archive_note": {"noteId": note.id},
            "delete_note": {"noteId": note.id},
        }

    @classmethod
    def links(cls) -> list[Link[NotesState]]:
        return [
            Hop(
                "note_tag_code",
                "title",
                "code",
                _plant_note_tag_code,
                relation="the reference code tagged on the note titled {of}",
            ),
            Hop(
                "person_note_title",
                "person",
                "title",
                _plant_person_note_title,
                relation="the title of the note that mentions {of}",
            ),
            Hop(
                "note_reminder",
                "title",
                "date",
                _plant_note_reminder,
                relation="the reminder date of the note titled {of}",
            ),
            Hop(
                "code_note_location",
                "code",
                "city",
                _plant_code_location,
                relation="the city recorded on the note tagged {of}",
            ),
            Action("create_titled_note", "title", _plant_create_note),
            Action("tag_person_note", "person", _plant_tag_note),
            Action("set_reminder", "date", _plant_reminder),
            Action("append_email_to_note", "email", _plant_append_email),
            Action("archive_note_due_on_date", "date", _plant_archive_due),
            Action("delete_titled_note", "title", _plant_delete_note),
            Action("pin_person_note", "person", _plant_pin_note),
            Action("move_code_note", "code", _plant_move_note),
            Action("remove_draft_tag", "title", _plant_remove_tag),
            Action("create_trip_notebook", "city", _plant_create_notebook),
        ]


def _note_text(n: Note) -> str:
    return f"{n.title} {n.body} {' '.join(n.tags)}".lower()


def _drop_notes(state: NotesState, text: str) -> None:
    """Make a lookup unambiguous: remove notes whose title, body or tags mention `text`."""
    low = text.lower()
    for nid in [n.id for n in state.notes.values() if low in _note_text(n)]:
        del state.notes[nid]


def _plant_note(state: NotesState, rng: random.Random, **fields) -> Note:
    if not state.notebooks:
        state.notebooks["nb_1"] = Notebook(id="nb_1", name="Personal")
    fields.setdefault("title", vocab.title(rng))
    fields.setdefault("body", vocab.sentence(rng))
    nid = next_id("note", state.notes)
    note = Note(id=nid, notebookId=next(iter(state.notebooks)), **fields)
    state.notes[nid] = note
    return note


def _plant_note_tag_code(state: NotesState, rng: random.Random, value: str) -> HopPlan:
    _drop_notes(state, value)
    note = _plant_note(state, rng, title=value, tags=[vocab.code(rng, "REF")])
    return query_hop(
        "search_notes",
        value,
        ("notes", 0, "tags", 0),
        note.tags[0],
        "open the note with that title and note the reference code it is tagged with",
    )


def _plant_person_note_title(state: NotesState, rng: random.Random, value: str) -> HopPlan:
    _drop_notes(state, value)
    note = _plant_note(state, rng, body=f"Call with {value} about next steps.", tags=["meeting"])
    return query_hop(
        "search_notes",
        value,
        ("notes", 0, "title"),
        note.title,
        "find the note that mentions that person and note its title",
    )


def _plant_note_reminder(state: NotesState, rng: random.Random, value: str) -> HopPlan:
    _drop_notes(state, value)
    note = _plant_note(state, rng, title=value, reminder=vocab.date(rng))
    return query_hop(
        "search_notes",
        value,
        ("notes", 0, "reminder"),
        str(note.reminder),
        "open the note with that title and note the date of its reminder",
    )


def _plant_code_location(state: NotesState, rng: random.Random, value: str) -> HopPlan:
    _drop_notes(state, value)
    note = _plant_note(state, rng, tags=[value], location=vocab.city(rng)[0])
    call = PlannedCall(
        "list_notes", {"tag": value}, inputs={"tag": "{value}"}, reveals=("notes", 0, "location")
    )
    return HopPlan(
        [call],
        note.location,
        "find the note tagged with that reference code and note the city it was written in",
    )


def _plant_create_note(state: NotesState, rng: random.Random, value: str) -> ActionPlan:
    _drop_notes(state, value)
    if not state.notebooks:
        state.notebooks["nb_1"] = Notebook(id="nb_1", name="Personal")
    notebook = next(iter(state.notebooks.values()))
    call = PlannedCall(
        "create_note",
        {"title": value, "body": "Draft outline.", "notebookId": notebook.id},
        inputs={"title": "{value}"},
    )
    crit = expect_record(
        "notes", f"a note '{value}' exists in '{notebook.name}'", title=value, notebookId=notebook.id
    )
    return ActionPlan([call], [crit], f"create a note with that title in the '{notebook.name}' notebook")


def _plant_tag_note(state: NotesState, rng: random.Random, value: str) -> ActionPlan:
    _drop_notes(state, value)
    title = f"1:1 prep {vocab.code(rng, 'MTG')}"
    _drop_notes(state, title)
    _plant_note(state, rng, title=title, body=f"Agenda for the catch-up with {value}.", tags=["meeting"])
    calls = [
        PlannedCall("search_notes", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "add_tag", {"noteId": None, "tag": "follow-up"}, bind={"noteId": (0, ("notes", 0, "id"))}
        ),
    ]
    crit = expect_record(
        "notes", f"the note '{title}' is tagged follow-up", title=title, tags=("contains", "follow-up")
    )
    return ActionPlan(calls, [crit], "add the tag 'follow-up' to the note that mentions that person")


def _plant_reminder(state: NotesState, rng: random.Random, value: str) -> ActionPlan:
    title = f"Renewal {vocab.code(rng, 'RN')}"
    _drop_notes(state, title)
    _plant_note(state, rng, title=title, tags=["finance"])
    calls = [
        PlannedCall("search_notes", {"query": title}),
        PlannedCall(
            "update_note",
            {"noteId": None, "reminder": value},
            inputs={"reminder": "{value}"},
            bind={"noteId": (0, ("notes", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "notes", f"the note '{title}' has a reminder on {value}", title=title, reminder=value
    )
    return ActionPlan(calls, [crit], f"set a reminder on that date for the note '{title}'")


def _on_carried(value: str, tool: str, **arguments) -> list[PlannedCall]:
    """Search the note by the carried `value`, then call `tool` on it."""
    return [
        PlannedCall("search_notes", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(tool, {"noteId": None, **arguments}, bind={"noteId": (0, ("notes", 0, "id"))}),
    ]


def _plant_append_email(state: NotesState, rng: random.Random, value: str) -> ActionPlan:
    _drop_notes(state, value)
    title = f"Supplier contacts {vocab.code(rng, 'SC')}"
    _drop_notes(state, title)
    note = _plant_note(state, rng, title=title, tags=["finance"])
    calls = [
        PlannedCall("search_notes", {"query": title}),
        PlannedCall(
            "append_to_note",
            {"noteId": None, "text": value},
            inputs={"text": "{value}"},
            bind={"noteId": (0, ("notes", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "notes", f"{value} is appended to the note '{title}'", title=title, body=f"{note.body}\n\n{value}"
    )
    return ActionPlan(calls, [crit], f"append that email address as a new paragraph to the note '{title}'")


def _fresh_note_title(state: NotesState, rng: random.Random) -> str:
    title = vocab.title(rng)
    _drop_notes(state, title)
    return title


def _plant_archive_due(state: NotesState, rng: random.Random, value: str) -> ActionPlan:
    _drop_notes(state, value)
    title = _fresh_note_title(state, rng)
    note = _plant_note(
        state, rng, title=title, body=f"Deadline: {value}. {vocab.sentence(rng)}", tags=["todo"]
    )
    crit = expect_record("notes", f"the note '{title}' is archived", id=note.id, title=title, archived=True)
    return ActionPlan(
        _on_carried(value, "archive_note"), [crit], "archive the note whose deadline is that date"
    )


def _plant_delete_note(state: NotesState, rng: random.Random, value: str) -> ActionPlan:
    _drop_notes(state, value)
    note = _plant_note(state, rng, title=value, tags=["draft"])
    crit = expect_record("notes", f"the note '{value}' is deleted", absent=True, id=note.id, title=value)
    return ActionPlan(_on_carried(value, "delete_note"), [crit], "delete the note with that title")


def _plant_pin_note(state: NotesState, rng: random.Random, value: str) -> ActionPlan:
    _drop_notes(state, value)
    title = f"Onboarding plan {vocab.code(rng, 'OB')}"
    _drop_notes(state, title)
    _plant_note(state, rng, title=title, body=f"Welcome checklist for {value}.", tags=["todo"])
    crit = expect_record("notes", f"the note '{title}' is pinned", title=title, pinned=True)
    return ActionPlan(
        _on_carried(value, "pin_note", pinned=True), [crit], "pin the note that mentions that person"
    )


def _plant_move_note(state: NotesState, rng: random.Random, value: str) -> ActionPlan:
    _drop_notes(state, value)
    note = _plant_note(state, rng, title=_fresh_note_title(state, rng), tags=[value])
    others = [nb for nb in state.notebooks.values() if nb.id != note.notebookId]
    if others:
        target = rng.choice(others)
    else:
        name = next(n for n in NOTEBOOKS if all(nb.name != n for nb in state.notebooks.values()))
        target = Notebook(id=next_id("nb", state.notebooks), name=name)
        state.notebooks[target.id] = target
    calls = [
        PlannedCall("list_notes", {"tag": value}, inputs={"tag": "{value}"}),
        PlannedCall(
            "move_note",
            {"noteId": None, "notebookId": target.id},
            bind={"noteId": (0, ("notes", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "notes",
        f"the note tagged {value} is in the '{target.name}' notebook",
        id=note.id,
        tags=("contains", value),
        notebookId=target.id,
    )
    return ActionPlan(
        calls, [crit], f"move the note tagged with that reference code to the '{target.name}' notebook"
    )


def _plant_remove_tag(state: NotesState, rng: random.Random, value: str) -> ActionPlan:
    _drop_notes(state, value)
    _plant_note(state, rng, title=value, tags=["draft", "reading"])
    crit = expect_record(
        "notes", f"the note '{value}' is no longer tagged draft", title=value, tags=["reading"]
    )
    return ActionPlan(
        _on_carried(value, "remove_tag", tag="draft"),
        [crit],
        "remove the tag 'draft' from the note with that title",
    )


def _plant_create_notebook(state: NotesState, rng: random.Random, value: str) -> ActionPlan:
    name = f"{value} Trip"
    for nid in [nb.id for nb in state.notebooks.values() if nb.name.lower() == name.lower()]:
        del state.notebooks[nid]
    call = PlannedCall("create_notebook", {"name": name}, inputs={"name": "{value} Trip"})
    crit = expect_record("notebooks", f"a notebook '{name}' exists", name=name)
    return ActionPlan([call], [crit], "create a notebook named after that city followed by the word 'Trip'")


register_service(NotesService)
