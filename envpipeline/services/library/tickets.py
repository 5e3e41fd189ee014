"""Support-ticket service (Zendesk-like): tickets, agents, comments, priority, escalation."""

from __future__ import annotations

import random
from operator import attrgetter
from typing import Annotated

from pydantic import Field

from envpipeline.models.base import Strict
from envpipeline.models.criteria import Criterion
from envpipeline.services import vocab
from envpipeline.services.base import (
    Record,
    Service,
    ToolArgs,
    bad_request,
    check_reference,
    conflict,
    dump,
    find_record,
    next_id,
    not_found,
    text_hit,
    tool,
)
from envpipeline.services.links import Action, ActionPlan, Hop, HopPlan, Link, PlannedCall, expect_record
from envpipeline.services.registry import register_service

PRIORITIES = ("low", "normal", "high", "urgent")
STATUSES = ("open", "pending", "solved")
TEAMS = ("billing", "technical", "accounts", "shipping")
TICKET_FIELDS = ("code", "subject", "description", "requester")
_TICKET_TEXT = attrgetter(*TICKET_FIELDS)
MAX_LEVEL = 3
#: the reasons the escalating actions state (the escalation's internal note must give them)
ESCALATED_BY_CODE = "customer is blocked"
ESCALATED_FOR_AGENT = "needs senior support"


class Agent(Record):
    id: str
    name: str
    email: str
    team: str


class Ticket(Record):
    id: str
    code: str
    subject: str
    description: str = ""
    requester: str
    priority: str = "normal"
    status: str = "open"
    assigneeId: str | None = None
    assignee: str = ""
    escalated: bool = False
    level: int = 1
    createdOn: str
    resolution: str = ""


class Comment(Record):
    id: str
    ticketId: str
    author: str
    body: str
    internal: bool = False


class TicketsState(Strict):
    agents: dict[str, Agent] = {}
    tickets: dict[str, Ticket] = {}
    comments: dict[str, Comment] = {}


class ListTicketsArgs(ToolArgs):
    status: Annotated[str | None, Field(description="open, pending, solved or closed")] = None
    priority: Annotated[str | None, Field(description="low, normal, high or urgent")] = None
    assigneeId: Annotated[str | None, Field(description="only tickets assigned to this agent")] = None
    createdOn: Annotated[str | None, Field(description="only tickets created on this day (YYYY-MM-DD)")] = (
        None
    )


class SearchTicketsArgs(ToolArgs):
    query: Annotated[str, Field(description="text searched in code, subject, description and requester")]


class TicketIdArgs(ToolArgs):
    ticketId: Annotated[str, Field(description="ticket id")]


class CreateTicketArgs(ToolArgs):
    subject: Annotated[str, Field(description="one-line subject")]
    requester: Annotated[str, Field(description="requester's email address")]
    description: Annotated[str, Field(description="problem description")] = ""
    priority: Annotated[str, Field(description="low, normal, high or urgent")] = "normal"


class AssignArgs(ToolArgs):
    ticketId: Annotated[str, Field(description="ticket id")]
    agentId: Annotated[str, Field(description="id of the agent to assign")]


class CommentArgs(ToolArgs):
    ticketId: Annotated[str, Field(description="ticket id")]
    body: Annotated[str, Field(description="comment text")]
    author: Annotated[str, Field(description="author name or email")] = "support"
    internal: Annotated[bool, Field(description="internal note, hidden from the requester")] = False


class PriorityArgs(ToolArgs):
    ticketId: Annotated[str, Field(description="ticket id")]
    priority: Annotated[str, Field(description="low, normal, high or urgent")]


class StatusArgs(ToolArgs):
    ticketId: Annotated[str, Field(description="ticket id")]
    status: Annotated[str, Field(description="open, pending or solved (use close_ticket to close)")]


class CloseArgs(ToolArgs):
    ticketId: Annotated[str, Field(description="ticket id")]
    resolution: Annotated[str, Field(description="how the issue was resolved")] = ""


class EscalateArgs(ToolArgs):
    ticketId: Annotated[str, Field(description="ticket id")]
    reason: Annotated[str, Field(description="why the ticket is escalated")]


class ListAgentsArgs(ToolArgs):
    query: Annotated[str | None, Field(description="text searched in agent name and email")] = None
    team: Annotated[str | None, Field(description="only agents of this team")] = None


def _new_ticket(state: TicketsState, rng: random.Random, **fields) -> Ticket:
    fields.setdefault("code", vocab.unique(rng, vocab.code, {t.code for t in state.tickets.values()}, "TCK"))
    fields.setdefault(
        "subject", f"{rng.choice(('Cannot access', 'Error in', 'Question about'))} {vocab.title(rng)}"
    )
    fields.setdefault("requester", vocab.email_for(vocab.person_name(rng), rng))
    fields.setdefault("createdOn", vocab.date(rng))
    fields.setdefault("priority", rng.choice(PRIORITIES[:3]))
    tid = next_id("tck", state.tickets)
    ticket = Ticket(id=tid, description=vocab.sentence(rng), **fields)
    state.tickets[tid] = ticket
    return ticket


def _new_agent(state: TicketsState, rng: random.Random, name: str) -> Agent:
    aid = next_id("agt", state.agents)
    agent = Agent(id=aid, name=name, email=vocab.email_for(name, rng), team=rng.choice(TEAMS))
    state.agents[aid] = agent
    return agent


class TicketsService(Service[TicketsState]):
    name = "tickets"
    title = "Support Tickets"
    domain = "business"

    @classmethod
    def generate_state(cls, rng: random.Random) -> TicketsState:
        state = TicketsState()
        names: set[str] = set()
        for _ in range(rng.randint(4, 5)):
            _new_agent(state, rng, vocab.unique(rng, vocab.person_name, names))
        agents = list(state.agents.values())
        count = rng.randint(5, 8)
        for i in range(count):
            agent = rng.choice(agents) if i % 2 else None
            assigned = {"assigneeId": agent.id, "assignee": agent.name} if agent else {}
            status = "solved" if i == count - 1 else rng.choice(STATUSES[:2])
            _new_ticket(state, rng, status=status, **assigned)
        for ticket in rng.sample(list(state.tickets.values()), 4):
            cid = next_id("cmt", state.comments)
            state.comments[cid] = Comment(
                id=cid, ticketId=ticket.id, author=ticket.requester, body=vocab.sentence(rng)
            )
        return state

    def _ticket(self, ticket_id: str, open_only: bool = False) -> Ticket:
        ticket = self.state.tickets.get(ticket_id)
        if ticket is None:
            raise not_found("ticket", ticket_id)
        if open_only and ticket.status == "closed":
            raise conflict(f"ticket {ticket.code} is closed")
        return ticket

    @tool(writes=False)
    def list_tickets(self, args: ListTicketsArgs) -> dict:
        """List tickets, optionally by status, priority, assignee or creation day."""
        check_reference(self.state.agents, "agent", args.assigneeId)
        found = [
            t
            for t in self.state.tickets.values()
            if (not args.status or t.status == args.status)
            and (not args.priority or t.priority == args.priority)
            and (not args.assigneeId or t.assigneeId == args.assigneeId)
            and (not args.createdOn or t.createdOn == args.createdOn)
        ]
        return {"tickets": [dump(t) for t in found]}

    @tool(writes=False)
    def search_tickets(self, args: SearchTicketsArgs) -> dict:
        """Search tickets by text in their code, subject, description or requester email."""
        q = args.query.strip().lower()
        if not q:
            raise bad_request("query must not be empty")
        hits = [t for t in self.state.tickets.values() if text_hit(q, _TICKET_TEXT(t))]
        return {"tickets": [dump(t) for t in hits]}

    @tool(writes=False)
    def get_ticket(self, args: TicketIdArgs) -> dict:
        """Get one ticket with its comments."""
        ticket = self._ticket(args.ticketId)
        comments = [dump(c) for c in self.state.comments.values() if c.ticketId == ticket.id]
        return {"ticket": dump(ticket), "comments": comments}

    @tool(writes=True)
    def create_ticket(self, args: CreateTicketArgs) -> dict:
        """Open a new support ticket for a requester."""
        if "@" not in args.requester:
            raise bad_request(f"invalid requester email '{args.requester}'")
        if not args.subject.strip():
            raise bad_request("subject must not be empty")
        if args.priority not in PRIORITIES:
            raise bad_request("priority must be low, normal, high or urgent")
        codes = {t.code for t in self.state.tickets.values()}
        n = len(self.state.tickets) + 1
        while f"TCK-{9000 + n}" in codes:
            n += 1
        tid = next_id("tck", self.state.tickets)
        ticket = Ticket(id=tid, code=f"TCK-{9000 + n}", createdOn="2026-01-15", **args.model_dump())
        self.state.tickets[tid] = ticket
        return {"ticket": dump(ticket)}

    @tool(writes=True)
    def assign_ticket(self, args: AssignArgs) -> dict:
        """Assign a ticket to a support agent."""
        ticket = self._ticket(args.ticketId, open_only=True)
        agent = find_record(self.state.agents, "agent", args.agentId)
        if ticket.assigneeId == agent.id:
            raise conflict(f"ticket {ticket.code} is already assigned to {agent.name}")
        ticket.assigneeId, ticket.assignee = agent.id, agent.name
        return {"ticket": dump(ticket)}

    @tool(writes=True)
    def add_comment(self, args: CommentArgs) -> dict:
        """Add a public reply or an internal note to a ticket."""
        ticket = self._ticket(args.ticketId, open_only=True)
        if not args.body.strip():
            raise bad_request("body must not be empty")
        cid = next_id("cmt", self.state.comments)
        comment = Comment(id=cid, **args.model_dump())
        self.state.comments[cid] = comment
        if ticket.status == "solved" and not args.internal:
            ticket.status = "open"
        return {"comment": dump(comment)}

    @tool(writes=False)
    def list_comments(self, args: TicketIdArgs) -> dict:
        """List the comments of a ticket."""
        self._ticket(args.ticketId)
        return {"comments": [dump(c) for c in self.state.comments.values() if c.ticketId == args.ticketId]}

    @tool(writes=True)
    def set_priority(self, args: PriorityArgs) -> dict:
        """Change a ticket's priority."""
        ticket = self._ticket(args.ticketId, open_only=True)
        if args.priority not in PRIORITIES:
            raise bad_request("priority must be low, normal, high or urgent")
        if ticket.priority == args.priority:
            raise conflict(f"ticket {ticket.code} already has priority {args.priority}")
        ticket.priority = args.priority
        return {"ticket": dump(ticket)}

    @tool(writes=True)
    def set_status(self, args: StatusArgs) -> dict:
        """Change a ticket's status to open, pending or solved."""
        ticket = self._ticket(args.ticketId, open_only=True)
        if args.status not in STATUSES:
            raise bad_request("status must be open, pending or solved; use close_ticket to close")
        if ticket.status == args.status:
            raise conflict(f"ticket {ticket.code} is already {args.status}")
        ticket.status = args.status
        return {"ticket": dump(ticket)}

    @tool(writes=True)
    def close_ticket(self, args: CloseArgs) -> dict:
        """Close a ticket, recording its resolution."""
        ticket = self._ticket(args.ticketId, open_only=True)
        ticket.status, ticket.resolution = "closed", args.resolution
        return {"ticket": dump(ticket)}

    @tool(writes=True)
    def reopen_ticket(self, args: TicketIdArgs) -> dict:
        """Reopen a solved or closed ticket."""
        ticket = self._ticket(args.ticketId)
        if ticket.status not in ("solved", "closed"):
            raise conflict(f"ticket {ticket.code} is {ticket.status}, not solved or closed")
        ticket.status = "open"
        return {"ticket": dump(ticket)}

    @tool(writes=True)
    def escalate_ticket(self, args: EscalateArgs) -> dict:
        """Escalate a ticket one support level (max 3), raising it to urgent with an internal note."""
        ticket = self._ticket(args.ticketId, open_only=True)
        if not args.reason.strip():
            raise bad_request("reason must not be empty")
        if ticket.level >= MAX_LEVEL:
            raise conflict(f"ticket {ticket.code} is already at the top support level")
        ticket.level += 1
        ticket.escalated, ticket.priority = True, "urgent"
        cid = next_id("cmt", self.state.comments)
        self.state.comments[cid] = Comment(
            id=cid, ticketId=ticket.id, author="system", body=f"Escalated: {args.reason}", internal=True
        )
        return {"ticket": dump(ticket)}

    @tool(writes=False)
    def list_agents(self, args: ListAgentsArgs) -> dict:
        """List support agents, optionally by name/email text or team."""
        q = (args.query or "").strip().lower()
        found = [
            a
            for a in self.state.agents.values()
            if q in f"{a.name} {a.email}".lower() and (not args.team or a.team == args.team)
        ]
        return {"agents": [dump(a) for a in found]}

    @classmethod
    def example_arguments(cls, state: TicketsState) -> dict[str, dict]:
        ticket = next(iter(state.tickets.values()))
        agent = next(a for a in state.agents.values() if a.id != ticket.assigneeId)
        priority = "urgent" if ticket.priority != "urgent" else "low"
        status = "solved" if ticket.status != "solved" else "pending"
        return {
            "list_tickets": {"assigneeId": agent.id, "status": "open"},
            "search_tickets": {"query": ticket.code},
            "get_ticket": {"ticketId": ticket.id},
            "create_ticket": {
                "subject": "Login fails",
                "requester": "ana.silva@example.com",
                "priority": "high",
            },
            "assign_ticket": {"ticketId": ticket.id, "agentId": agent.id},
            "add_comment": {"ticketId": ticket.id, "body": "Looking into it.", "author": agent.email},
            "list_comments": {"ticketId": ticket.id},
            "set_priority": {"ticketId": ticket.id, "priority": priority},
            "set_status": {"ticketId": ticket.id, "status": status},
            "close_ticket": {"ticketId": ticket.id, "resolution": "Fixed"},
            "reopen_ticket": {"ticketId": next(t.id for t in state.tickets.values() if t.status == "solved")},
            "escalate_ticket": {"ticketId": ticket.id, "reason": "customer blocked"},
            "list_agents": {"team": agent.team},
        }

    @classmethod
    def links(cls) -> list[Link[TicketsState]]:
        return [
            Hop(
                "ticket_requester",
                "ticket_code",
                "email",
                _plant_code_email,
                relation="the requester email address on support ticket {of}",
            ),
            Hop(
                "ticket_code_by_subject",
                "title",
                "ticket_code",
                _plant_title_code,
                relation="the code of the support ticket with the subject {of}",
            ),
            Hop(
                "requester_ticket_subject",
                "email",
                "title",
                _plant_email_title,
                relation="the subject of the support ticket filed by {of}",
            ),
            Hop(
                "ticket_assignee",
                "ticket_code",
                "person",
                _plant_code_assignee,
                relation="the agent assigned to support ticket {of}",
            ),
            Hop(
                "ticket_created_on",
                "date",
                "ticket_code",
                _plant_date_code,
                relation="the code of the support ticket created on {of}",
            ),
            Hop(
                "ticket_commenter",
                "title",
                "email",
                _plant_title_commenter,
                relation="the email address of the person who commented on the support ticket with the subject {of}",
            ),
            Action("escalate_ticket_by_code", "ticket_code", _plant_escalate),
            Action("assign_ticket_to_person", "person", _plant_assign),
            Action("open_ticket_for_requester", "email", _plant_open),
            Action("close_ticket_by_subject", "title", _plant_close),
            Action("reply_to_requester", "email", _plant_reply),
            Action("reopen_ticket_by_subject", "title", _plant_reopen),
            Action("escalate_ticket_of_agent", "person", _plant_escalate_agent),
            Action("raise_priority_on_date", "date", _plant_priority),
            Action("set_pending_by_reference", "code", _plant_pending),
        ]


def _drop_tickets(state: TicketsState, value: str) -> None:
    """Make a lookup unambiguous: remove tickets whose searchable text mentions `value`."""
    low = value.lower()
    gone = {t.id for t in state.tickets.values() if any(low in getattr(t, f).lower() for f in TICKET_FIELDS)}
    for tid in gone:
        del state.tickets[tid]
    for cid in [c.id for c in state.comments.values() if c.ticketId in gone]:
        del state.comments[cid]


def _search(value: str, carried: bool = True, reveals: tuple | None = None) -> PlannedCall:
    inputs = {"query": "{value}"} if carried else {}
    return PlannedCall("search_tickets", {"query": value}, inputs=inputs, reveals=reveals)


def _ticket_hop(state: TicketsState, rng: random.Random, value: str, field: str, reveal: str, phrase: str):
    _drop_tickets(state, value)
    ticket = _new_ticket(state, rng, **{field: value})
    return HopPlan([_search(value, reveals=("tickets", 0, reveal))], getattr(ticket, reveal), phrase)


def _plant_code_email(state: TicketsState, rng: random.Random, value: str) -> HopPlan:
    phrase = "look up the support ticket with that ticket code and note the requester's email address"
    return _ticket_hop(state, rng, value, "code", "requester", phrase)


def _plant_title_code(state: TicketsState, rng: random.Random, value: str) -> HopPlan:
    phrase = "find the support ticket with that title as its subject and note its ticket code"
    return _ticket_hop(state, rng, value, "subject", "code", phrase)


def _plant_email_title(state: TicketsState, rng: random.Random, value: str) -> HopPlan:
    # a plain title as the subject ("Cannot access <title>" would name a second title in the answer)
    _drop_tickets(state, value)
    subject = vocab.title(rng)
    _drop_tickets(state, subject)
    _new_ticket(state, rng, requester=value, subject=subject)
    phrase = "find the support ticket filed by that email address and note its subject"
    return HopPlan([_search(value, reveals=("tickets", 0, "subject"))], subject, phrase)


def _plant_code_assignee(state: TicketsState, rng: random.Random, value: str) -> HopPlan:
    _drop_tickets(state, value)
    agent = _new_agent(
        state, rng, vocab.unique(rng, vocab.person_name, {a.name for a in state.agents.values()})
    )
    _new_ticket(state, rng, code=value, assigneeId=agent.id, assignee=agent.name)
    phrase = "look up the support ticket with that ticket code and note the name of the agent assigned to it"
    return HopPlan([_search(value, reveals=("tickets", 0, "assignee"))], agent.name, phrase)


def _plant_date_code(state: TicketsState, rng: random.Random, value: str) -> HopPlan:
    for tid in [t.id for t in state.tickets.values() if t.createdOn == value]:
        del state.tickets[tid]
    ticket = _new_ticket(state, rng, createdOn=value)
    call = PlannedCall(
        "list_tickets", {"createdOn": value}, inputs={"createdOn": "{value}"}, reveals=("tickets", 0, "code")
    )
    return HopPlan(
        [call], ticket.code, "list the support tickets created on that date and note the ticket's code"
    )


def _by_id(tool_name: str, arguments: dict) -> PlannedCall:
    return PlannedCall(
        tool_name, {"ticketId": None, **arguments}, bind={"ticketId": (0, ("tickets", 0, "id"))}
    )


def _plant_escalate(state: TicketsState, rng: random.Random, value: str) -> ActionPlan:
    _drop_tickets(state, value)
    ticket = _new_ticket(state, rng, code=value)
    calls = [_search(value), _by_id("escalate_ticket", {"reason": ESCALATED_BY_CODE})]
    crit = expect_record(
        "tickets", f"ticket {value} is escalated", code=value, escalated=True, priority="urgent"
    )
    return ActionPlan(
        calls,
        [crit, _escalation_note(ticket, ESCALATED_BY_CODE)],
        f"escalate the support ticket with that ticket code (reason: {ESCALATED_BY_CODE})",
    )


def _escalation_note(ticket: Ticket, reason: str) -> Criterion:
    """The criterion that the escalation's internal note gives the reason the request states."""
    return expect_record(
        "comments",
        f"the escalation note on ticket {ticket.code} gives the reason '{reason}'",
        ticketId=ticket.id,
        internal=True,
        body=("icontains", reason),
    )


def _plant_assign(state: TicketsState, rng: random.Random, value: str) -> ActionPlan:
    gone = {a.id for a in state.agents.values() if value.lower() in f"{a.name} {a.email}".lower()}
    for aid in gone:
        del state.agents[aid]
    for ticket in state.tickets.values():
        if ticket.assigneeId in gone:
            ticket.assigneeId, ticket.assignee = None, ""
    _new_agent(state, rng, value)
    code = vocab.unique(rng, vocab.code, {t.code for t in state.tickets.values()}, "TCK")
    _drop_tickets(state, code)
    _new_ticket(state, rng, code=code)
    calls = [
        PlannedCall("search_tickets", {"query": code}),
        PlannedCall("list_agents", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "assign_ticket",
            {"ticketId": None, "agentId": None},
            bind={"ticketId": (0, ("tickets", 0, "id")), "agentId": (1, ("agents", 0, "id"))},
        ),
    ]
    crit = expect_record("tickets", f"ticket {code} is assigned to {value}", code=code, assignee=value)
    return ActionPlan(calls, [crit], f"assign support ticket {code} to the agent who is that person")


def _plant_open(state: TicketsState, rng: random.Random, value: str) -> ActionPlan:
    subject = f"Refund request {vocab.code(rng, 'ORD')}"
    _drop_tickets(state, subject)
    call = PlannedCall(
        "create_ticket",
        {"subject": subject, "requester": value, "priority": "high"},
        inputs={"requester": "{value}"},
    )
    crit = expect_record(
        "tickets",
        f"a high-priority ticket '{subject}' from {value}",
        subject=subject,
        requester=value,
        priority="high",
    )
    return ActionPlan(
        [call], [crit], f"open a high-priority support ticket '{subject}' on behalf of that email address"
    )


def _plant_close(state: TicketsState, rng: random.Random, value: str) -> ActionPlan:
    _drop_tickets(state, value)
    _new_ticket(state, rng, subject=value, status="open")
    calls = [_search(value), _by_id("close_ticket", {"resolution": "Resolved by support"})]
    crit = expect_record("tickets", f"the ticket '{value}' is closed", subject=value, status="closed")
    return ActionPlan(calls, [crit], "close the support ticket whose subject is that title")


def _plant_title_commenter(state: TicketsState, rng: random.Random, value: str) -> HopPlan:
    _drop_tickets(state, value)
    ticket = _new_ticket(state, rng, subject=value, status="open")
    author = vocab.email_for(vocab.person_name(rng), rng)
    while author == ticket.requester:
        author = vocab.email_for(vocab.person_name(rng), rng)
    cid = next_id("cmt", state.comments)
    state.comments[cid] = Comment(id=cid, ticketId=ticket.id, author=author, body=vocab.sentence(rng))
    calls = [
        _search(value),
        PlannedCall(
            "list_comments",
            {"ticketId": None},
            bind={"ticketId": (0, ("tickets", 0, "id"))},
            reveals=("comments", 0, "author"),
        ),
    ]
    phrase = (
        "find the support ticket with that title as its subject, read its comments and note the "
        "email address of the person who commented"
    )
    return HopPlan(calls, author, phrase)


def _plant_reply(state: TicketsState, rng: random.Random, value: str) -> ActionPlan:
    _drop_tickets(state, value)
    ticket = _new_ticket(state, rng, requester=value, status="open")
    body = f"Thanks for reaching out, we are on it ({vocab.code(rng, 'RE')})."
    calls = [_search(value), _by_id("add_comment", {"body": body, "internal": False})]
    crit = expect_record(
        "comments",
        f"a public reply is added to the ticket {ticket.code}",
        ticketId=ticket.id,
        body=body,
        internal=False,
    )
    return ActionPlan(
        calls, [crit], f"add the public reply '{body}' to the support ticket filed by that email address"
    )


def _plant_reopen(state: TicketsState, rng: random.Random, value: str) -> ActionPlan:
    _drop_tickets(state, value)
    _new_ticket(state, rng, subject=value, status="solved")
    calls = [_search(value), _by_id("reopen_ticket", {})]
    crit = expect_record("tickets", f"the ticket '{value}' is open again", subject=value, status="open")
    return ActionPlan(calls, [crit], "reopen the solved support ticket whose subject is that title")


def _plant_escalate_agent(state: TicketsState, rng: random.Random, value: str) -> ActionPlan:
    gone = {a.id for a in state.agents.values() if value.lower() in f"{a.name} {a.email}".lower()}
    for aid in gone:
        del state.agents[aid]
    for ticket in state.tickets.values():
        if ticket.assigneeId in gone:
            ticket.assigneeId, ticket.assignee = None, ""
    agent = _new_agent(state, rng, value)
    ticket = _new_ticket(state, rng, assigneeId=agent.id, assignee=agent.name, status="open")
    calls = [
        PlannedCall("list_agents", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall("list_tickets", {"assigneeId": None}, bind={"assigneeId": (0, ("agents", 0, "id"))}),
        PlannedCall(
            "escalate_ticket",
            {"ticketId": None, "reason": ESCALATED_FOR_AGENT},
            bind={"ticketId": (1, ("tickets", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "tickets",
        f"ticket {ticket.code} is escalated",
        id=ticket.id,
        assignee=value,
        escalated=True,
        priority="urgent",
    )
    return ActionPlan(
        calls,
        [crit, _escalation_note(ticket, ESCALATED_FOR_AGENT)],
        f"escalate the support ticket assigned to the agent who is that person (reason: {ESCALATED_FOR_AGENT})",
    )


def _plant_priority(state: TicketsState, rng: random.Random, value: str) -> ActionPlan:
    for tid in [t.id for t in state.tickets.values() if t.createdOn == value]:
        del state.tickets[tid]
    for cid in [c.id for c in state.comments.values() if c.ticketId not in state.tickets]:
        del state.comments[cid]
    ticket = _new_ticket(state, rng, createdOn=value, priority="low", status="open")
    call = PlannedCall("list_tickets", {"createdOn": value}, inputs={"createdOn": "{value}"})
    calls = [call, _by_id("set_priority", {"priority": "high"})]
    crit = expect_record(
        "tickets",
        f"ticket {ticket.code} has high priority",
        id=ticket.id,
        code=ticket.code,
        createdOn=value,
        priority="high",
    )
    return ActionPlan(calls, [crit], "raise the support ticket created on that date to high priority")


def _plant_pending(state: TicketsState, rng: random.Random, value: str) -> ActionPlan:
    _drop_tickets(state, value)
    ticket = _new_ticket(state, rng, status="open")
    ticket.description = f"Customer quotes reference {value}; awaiting their reply."
    calls = [_search(value), _by_id("set_status", {"status": "pending"})]
    crit = expect_record(
        "tickets", f"ticket {ticket.code} is pending", id=ticket.id, code=ticket.code, status="pending"
    )
    return ActionPlan(calls, [crit], "set the support ticket that mentions that reference code to pending")


register_service(TicketsService)
