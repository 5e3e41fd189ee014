"""Calendar service (Google-Calendar-like): events with attendees; the paper's update_event."""

from __future__ import annotations

import random
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

UPDATABLE_FIELDS = ("summary", "description", "location", "start", "end")


class Event(Record):
    id: str
    summary: str
    description: str = ""
    location: str = ""
    start: str
    end: str
    attendees: list[str] = []
    status: str = "confirmed"


class CalendarState(Strict):
    events: dict[str, Event] = {}


class ListEventsArgs(ToolArgs):
    date: Annotated[str | None, Field(description="only events starting on this day (YYYY-MM-DD)")] = None
    maxResults: Annotated[int, Field(description="maximum events to return", ge=1, le=100)] = 20


class SearchEventsArgs(ToolArgs):
    query: Annotated[str, Field(description="text searched in summary, description and location")]


class EventIdArgs(ToolArgs):
    eventId: Annotated[str, Field(description="event id")]


class CreateEventArgs(ToolArgs):
    summary: Annotated[str, Field(description="event title")]
    start: Annotated[str, Field(description="start, ISO datetime (YYYY-MM-DDTHH:MM)")]
    end: Annotated[str, Field(description="end, ISO datetime (YYYY-MM-DDTHH:MM)")]
    location: Annotated[str, Field(description="where it happens")] = ""
    description: Annotated[str, Field(description="free text")] = ""
    attendees: Annotated[list[str], Field(description="attendee email addresses")] = []


class UpdateEventArgs(ToolArgs):
    """Only summary, description, location, start and end are updatable (paper, appendix C)."""

    eventId: Annotated[str | None, Field(description="event id (required)")] = None
    summary: Annotated[str | None, Field(description="new title")] = None
    description: Annotated[str | None, Field(description="new description")] = None
    location: Annotated[str | None, Field(description="new location")] = None
    start: Annotated[str | None, Field(description="new start, ISO datetime")] = None
    end: Annotated[str | None, Field(description="new end, ISO datetime")] = None


class AttendeeArgs(ToolArgs):
    eventId: Annotated[str, Field(description="event id")]
    email: Annotated[str, Field(description="attendee email address")]


class RespondArgs(ToolArgs):
    eventId: Annotated[str, Field(description="event id")]
    status: Annotated[str, Field(description="confirmed, tentative or cancelled")]


class CalendarService(Service[CalendarState]):
    name = "calendar"
    title = "Calendar"
    domain = "productivity"

    @classmethod
    def generate_state(cls, rng: random.Random) -> CalendarState:
        events: dict[str, Event] = {}
        for _ in range(rng.randint(4, 8)):
            day = vocab.date(rng)
            hour = rng.randint(8, 17)
            eid = next_id("evt", events)
            events[eid] = Event(
                id=eid,
                summary=vocab.title(rng),
                description=vocab.sentence(rng),
                location=vocab.city(rng)[0],
                start=f"{day}T{hour:02d}:00",
                end=f"{day}T{hour + 1:02d}:00",
                attendees=[vocab.email_for(vocab.person_name(rng), rng)],
            )
        return CalendarState(events=events)

    def _event(self, event_id: str) -> Event:
        event = self.state.events.get(event_id)
        if event is None:
            raise not_found("event", event_id)
        return event

    @tool(writes=False)
    def list_events(self, args: ListEventsArgs) -> dict:
        """List events, optionally only those starting on one day."""
        found = [e for e in self.state.events.values() if not args.date or e.start.startswith(args.date)]
        return {"events": [dump(e) for e in found[: args.maxResults]]}

    @tool(writes=False)
    def search_events(self, args: SearchEventsArgs) -> dict:
        """Search events by text in their summary, description or location."""
        q = args.query.lower().strip()
        if not q:
            raise bad_request("query must not be empty")
        hits = [
            e for e in self.state.events.values() if q in f"{e.summary} {e.description} {e.location}".lower()
        ]
        return {"events": [dump(e) for e in hits]}

    @tool(writes=False)
    def get_event(self, args: EventIdArgs) -> dict:
        """Get one event by id."""
        return {"event": dump(self._event(args.eventId))}

    @tool(writes=True)
    def create_event(self, args: CreateEventArgs) -> dict:
        """Create an event; end must not be before start."""
        if args.end < args.start:
            raise bad_request("end must not be before start")
        eid = next_id("evt", self.state.events)
        event = Event(id=eid, **args.model_dump())
        self.state.events[eid] = event
        return {"event": dump(event)}

    @tool(writes=True)
    def update_event(self, args: UpdateEventArgs) -> dict:
        """Update an event's summary, description, location, start or end (only those fields)."""
        if not args.eventId:
            raise bad_request("missing required argument 'eventId'")
        event = self._event(args.eventId)
        changes = {f: getattr(args, f) for f in UPDATABLE_FIELDS if getattr(args, f) is not None}
        if not changes:
            raise bad_request(f"nothing to update; updatable fields: {', '.join(UPDATABLE_FIELDS)}")
        for name, value in changes.items():
            setattr(event, name, value)
        if event.end < event.start:
            raise bad_request("end must not be before start")
        return {"event": dump(event), "updated": sorted(changes)}

    @tool(writes=True)
    def delete_event(self, args: EventIdArgs) -> dict:
        """Delete an event."""
        self._event(args.eventId)
        del self.state.events[args.eventId]
        return {"deleted": args.eventId}

    @tool(writes=True)
    def add_attendee(self, args: AttendeeArgs) -> dict:
        """Invite one attendee to an event."""
        event = self._event(args.eventId)
        if "@" not in args.email:
            raise bad_request(f"invalid email '{args.email}'")
        if args.email in event.attendees:
            raise conflict(f"{args.email} is already invited to {args.eventId}")
        event.attendees.append(args.email)
        return {"event": dump(event)}

    @tool(writes=True)
    def remove_attendee(self, args: AttendeeArgs) -> dict:
        """Remove one attendee from an event."""
        event = self._event(args.eventId)
        if args.email not in event.attendees:
            raise not_found("attendee", args.email)
        event.attendees.remove(args.email)
        return {"event": dump(event)}

    @tool(writes=True)
    def set_event_status(self, args: RespondArgs) -> dict:
        """Set an event's status: confirmed, tentative or cancelled."""
        if args.status not in ("confirmed", "tentative", "cancelled"):
            raise bad_request("status must be confirmed, tentative or cancelled")
        event = self._event(args.eventId)
        event.status = args.status
        return {"event": dump(event)}

    @classmethod
    def example_arguments(cls, state: CalendarState) -> dict[str, dict]:
        first = next(iter(state.events.values()))
        return {
            "list_events": {"date": first.start[:10]},
            "search_events": {"query": first.summary.split()[0]},
            "get_event": {"eventId": first.id},
            "create_event": {"summary": "Standup", "start": "2026-03-02T09:00", "end": "2026-03-02T09:15"},
            "update_event": {"eventId": first.id, "location": "Online"},
            "delete_event": {"eventId": first.id},
            "add_attendee": {"eventId": first.id, "email": "new.person@example.com"},
            "remove_attendee": {"eventId": first.id, "email": first.attendees[0]},
            "set_event_status": {"eventId": first.id, "status": "cancelled"},
        }

    @classmethod
    def links(cls) -> list[Link[CalendarState]]:
        return [
            Hop(
                "event_location",
                "title",
                "city",
                _plant_event_location,
                relation="the city of the calendar event titled {of}",
            ),
            Hop(
                "event_on_date",
                "date",
                "title",
                _plant_event_on_date,
                relation="the title of the calendar event on {of}",
            ),
            Hop(
                "event_attendee",
                "title",
                "email",
                _plant_event_attendee,
                relation="the email address of the attendee invited to the calendar event titled {of}",
            ),
            Action("move_event_online", "title", _plant_move_online),
            Action("create_event_on_date", "date", _plant_create_on_date),
            Action("invite_attendee", "email", _plant_invite),
            Action("cancel_event", "title", _plant_cancel),
            Action("delete_event_on_date", "date", _plant_delete_on_date),
            Action("uninvite_attendee", "email", _plant_uninvite),
        ]


def _mentioning(state: CalendarState, text: str) -> list[str]:
    """The ids of the events whose text mentions `text`."""
    low = text.lower()
    return [
        e.id
        for e in state.events.values()
        if low in f"{e.summary} {e.description} {e.location} {e.start}".lower()
    ]


def _drop_matching(state: CalendarState, text: str) -> None:
    """Make a lookup unambiguous: remove events whose text already mentions `text`."""
    for eid in _mentioning(state, text):
        del state.events[eid]


def _fresh_summary(state: CalendarState, rng: random.Random) -> str:
    """A new event title no event mentions yet (records planted earlier in a task are kept)."""
    name = vocab.fresh(rng, vocab.title, lambda text: bool(_mentioning(state, text)))
    _drop_matching(state, name)
    return name


def _plant(state: CalendarState, rng: random.Random, **fields) -> Event:
    day = fields.pop("day", None) or vocab.date(rng)
    eid = next_id("evt", state.events)
    event = Event(id=eid, start=f"{day}T18:30", end=f"{day}T21:00", **fields)
    state.events[eid] = event
    return event


def _plant_event_location(state: CalendarState, rng: random.Random, value: str) -> HopPlan:
    _drop_matching(state, value)
    place = vocab.city(rng)[0]
    _plant(state, rng, summary=value, location=place, description=vocab.sentence(rng))
    return query_hop(
        "search_events",
        value,
        ("events", 0, "location"),
        place,
        "find the calendar event with that title and note the city where it takes place",
    )


def _plant_event_on_date(state: CalendarState, rng: random.Random, value: str) -> HopPlan:
    _drop_matching(state, value)
    name = _fresh_summary(state, rng)
    _plant(state, rng, summary=name, location=vocab.city(rng)[0], day=value)
    call = PlannedCall(
        "list_events", {"date": value}, inputs={"date": "{value}"}, reveals=("events", 0, "summary")
    )
    return HopPlan(
        [call], name, "look at the calendar on that date and note the title of the event scheduled then"
    )


def _plant_event_attendee(state: CalendarState, rng: random.Random, value: str) -> HopPlan:
    _drop_matching(state, value)
    guest = vocab.email_for(vocab.person_name(rng), rng)
    _plant(state, rng, summary=value, location=vocab.city(rng)[0], attendees=[guest])
    return query_hop(
        "search_events",
        value,
        ("events", 0, "attendees", 0),
        guest,
        "find the calendar event with that title and note its invited attendee's email",
    )


def _plant_move_online(state: CalendarState, rng: random.Random, value: str) -> ActionPlan:
    _drop_matching(state, value)
    _plant(state, rng, summary=value, location=vocab.city(rng)[0])
    calls = [
        PlannedCall("search_events", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "update_event",
            {"eventId": None, "location": "Online"},
            bind={"eventId": (0, ("events", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "events",
        f"the calendar event '{value}' is moved to location 'Online'",
        summary=value,
        location="Online",
    )
    return ActionPlan(
        calls, [crit], "move the calendar event with that title online (set its location to 'Online')"
    )


def _plant_create_on_date(state: CalendarState, rng: random.Random, value: str) -> ActionPlan:
    name = f"Follow-up {vocab.code(rng, 'FU')}"
    call = PlannedCall(
        "create_event",
        {"summary": name, "start": f"{value}T09:00", "end": f"{value}T10:00"},
        inputs={"start": "{value}T09:00", "end": "{value}T10:00"},
    )
    crit = expect_record(
        "events", f"an event '{name}' starts on {value}", summary=name, start=("contains", value)
    )
    return ActionPlan(
        [call], [crit], f"create a calendar event titled '{name}' from 09:00 to 10:00 on that date"
    )


def _plant_invite(state: CalendarState, rng: random.Random, value: str) -> ActionPlan:
    name = _fresh_summary(state, rng)
    _plant(state, rng, summary=name, location=vocab.city(rng)[0])
    calls = [
        PlannedCall("search_events", {"query": name}),
        PlannedCall(
            "add_attendee",
            {"eventId": None, "email": value},
            inputs={"email": "{value}"},
            bind={"eventId": (0, ("events", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "events", f"{value} is invited to '{name}'", summary=name, attendees=("contains", value)
    )
    return ActionPlan(calls, [crit], f"invite that email address to the calendar event '{name}'")


def _plant_cancel(state: CalendarState, rng: random.Random, value: str) -> ActionPlan:
    _drop_matching(state, value)
    _plant(state, rng, summary=value, location=vocab.city(rng)[0])
    calls = [
        PlannedCall("search_events", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "set_event_status",
            {"eventId": None, "status": "cancelled"},
            bind={"eventId": (0, ("events", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "events", f"the calendar event '{value}' is cancelled", summary=value, status="cancelled"
    )
    return ActionPlan(calls, [crit], "mark the calendar event with that title as cancelled")


def _plant_delete_on_date(state: CalendarState, rng: random.Random, value: str) -> ActionPlan:
    _drop_matching(state, value)
    name = _fresh_summary(state, rng)
    event = _plant(state, rng, summary=name, location=vocab.city(rng)[0], day=value)
    calls = [
        PlannedCall("list_events", {"date": value}, inputs={"date": "{value}"}),
        PlannedCall("delete_event", {"eventId": None}, bind={"eventId": (0, ("events", 0, "id"))}),
    ]
    crit = expect_record(
        "events", f"the event '{name}' on {value} is deleted", absent=True, id=event.id, summary=name
    )
    return ActionPlan(calls, [crit], "delete the calendar event scheduled on that date")


def _plant_uninvite(state: CalendarState, rng: random.Random, value: str) -> ActionPlan:
    name = _fresh_summary(state, rng)
    other = vocab.unique(rng, lambda r: vocab.email_for(vocab.person_name(r), r), {value})
    _plant(state, rng, summary=name, location=vocab.city(rng)[0], attendees=[other, value])
    calls = [
        PlannedCall("search_events", {"query": name}),
        PlannedCall(
            "remove_attendee",
            {"eventId": None, "email": value},
            inputs={"email": "{value}"},
            bind={"eventId": (0, ("events", 0, "id"))},
        ),
    ]
    gone = expect_record(
        "events",
        f"{value} is no longer invited to '{name}'",
        absent=True,
        summary=name,
        attendees=("contains", value),
    )
    kept = expect_record(
        "events",
        f"'{name}' still takes place with {other} invited",
        summary=name,
        attendees=("contains", other),
    )
    return ActionPlan(
        calls, [gone, kept], f"remove that email address from the attendees of the calendar event '{name}'"
    )


register_service(CalendarService)
