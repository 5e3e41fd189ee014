"""Chat service (Slack/Teams-like): channels, members, channel posts and direct messages."""

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

ME = "me"
NOW = "2026-05-15T10:00"
ROLES = ("Engineer", "Designer", "Product Manager", "Data Analyst", "Support Lead", "Recruiter", "Sales Rep")
PREFIXES = ("proj", "team", "ops", "help", "announce")


class Member(Record):
    id: str
    name: str
    email: str
    role: str = ""
    city: str = ""


class Channel(Record):
    id: str
    name: str
    topic: str = ""
    members: list[str] = []
    linkedTicket: str = ""
    archived: bool = False


class ChatMessage(Record):
    id: str
    channelId: str | None = None
    recipientId: str | None = None
    authorId: str
    text: str
    date: str
    reactions: list[str] = []
    pinned: bool = False


class ChatState(Strict):
    members: dict[str, Member] = {}
    channels: dict[str, Channel] = {}
    messages: dict[str, ChatMessage] = {}


class ListChannelsArgs(ToolArgs):
    query: Annotated[str | None, Field(description="text searched in channel name and topic")] = None
    includeArchived: Annotated[bool, Field(description="also list archived channels")] = False


class ChannelIdArgs(ToolArgs):
    channelId: Annotated[str, Field(description="channel id")]


class ChannelMessagesArgs(ToolArgs):
    channelId: Annotated[str, Field(description="channel id")]
    pinnedOnly: Annotated[bool, Field(description="only pinned messages")] = False
    maxResults: Annotated[int, Field(description="maximum messages to return", ge=1, le=100)] = 20


class QueryArgs(ToolArgs):
    query: Annotated[str, Field(description="text to search for")]


class ListMembersArgs(ToolArgs):
    query: Annotated[str | None, Field(description="text searched in name, email, role and city")] = None


class MemberIdArgs(ToolArgs):
    memberId: Annotated[str, Field(description="member id")]


class PostArgs(ToolArgs):
    channelId: Annotated[str, Field(description="channel id")]
    text: Annotated[str, Field(description="message text")]


class DirectArgs(ToolArgs):
    memberId: Annotated[str, Field(description="id of the member to message")]
    text: Annotated[str, Field(description="message text")]


class ReactArgs(ToolArgs):
    messageId: Annotated[str, Field(description="message id")]
    emoji: Annotated[str, Field(description="reaction emoji name, e.g. thumbsup")]


class MessageIdArgs(ToolArgs):
    messageId: Annotated[str, Field(description="message id")]


class CreateChannelArgs(ToolArgs):
    name: Annotated[str, Field(description="channel name (lowercase, no spaces)")]
    topic: Annotated[str, Field(description="channel topic")] = ""


class ChannelMemberArgs(ToolArgs):
    channelId: Annotated[str, Field(description="channel id")]
    memberId: Annotated[str, Field(description="member id")]


class TopicArgs(ToolArgs):
    channelId: Annotated[str, Field(description="channel id")]
    topic: Annotated[str, Field(description="new channel topic")]


class ChatService(Service[ChatState]):
    name = "chat"
    title = "Team Chat"
    domain = "communication"

    @classmethod
    def generate_state(cls, rng: random.Random) -> ChatState:
        members: dict[str, Member] = {}
        taken: set[str] = set()
        for _ in range(rng.randint(4, 8)):
            name = vocab.unique(rng, vocab.person_name, taken)
            mid = next_id("usr", members)
            members[mid] = Member(
                id=mid,
                name=name,
                email=vocab.email_for(name, rng),
                role=rng.choice(ROLES),
                city=vocab.city(rng)[0],
            )
        ids = list(members)
        channels: dict[str, Channel] = {}
        names: set[str] = set()
        for _ in range(rng.randint(4, 6)):
            name = vocab.unique(rng, lambda r: f"{r.choice(PREFIXES)}-{r.choice(vocab.WORDS)}", names)
            cid = next_id("ch", channels)
            channels[cid] = Channel(
                id=cid,
                name=name,
                topic=vocab.title(rng),
                members=[ME, *rng.sample(ids, rng.randint(2, len(ids) - 1))],
                linkedTicket=vocab.code(rng, "TCK"),
            )
        messages: dict[str, ChatMessage] = {}
        for _ in range(rng.randint(5, 9)):
            channel = rng.choice(list(channels.values()))
            msg_id = next_id("m", messages)
            messages[msg_id] = ChatMessage(
                id=msg_id,
                channelId=channel.id,
                authorId=rng.choice(channel.members[1:]),
                text=vocab.sentence(rng),
                date=f"{vocab.date(rng)}T{rng.randint(8, 18):02d}:{rng.randint(0, 59):02d}",
            )
        return ChatState(members=members, channels=channels, messages=messages)

    def _channel(self, channel_id: str) -> Channel:
        channel = self.state.channels.get(channel_id)
        if channel is None:
            raise not_found("channel", channel_id)
        return channel

    def _member(self, member_id: str) -> Member:
        member = self.state.members.get(member_id)
        if member is None:
            raise not_found("member", member_id)
        return member

    def _msg(self, message_id: str) -> ChatMessage:
        message = self.state.messages.get(message_id)
        if message is None:
            raise not_found("message", message_id)
        return message

    def _new_message(self, text: str, **where) -> ChatMessage:
        if not text.strip():
            raise bad_request("text must not be empty")
        msg_id = next_id("m", self.state.messages)
        message = ChatMessage(id=msg_id, authorId=ME, text=text, date=NOW, **where)
        self.state.messages[msg_id] = message
        return message

    @tool(writes=False)
    def list_channels(self, args: ListChannelsArgs) -> dict:
        """List channels, optionally those whose name or topic contains a text."""
        q = (args.query or "").lower().strip()
        found = [
            c
            for c in self.state.channels.values()
            if (args.includeArchived or not c.archived) and q in f"{c.name} {c.topic}".lower()
        ]
        return {"channels": [dump(c) for c in found]}

    @tool(writes=False)
    def get_channel(self, args: ChannelIdArgs) -> dict:
        """Get one channel with its topic, members and linked ticket."""
        return {"channel": dump(self._channel(args.channelId))}

    @tool(writes=False)
    def list_channel_messages(self, args: ChannelMessagesArgs) -> dict:
        """List the messages posted in a channel, optionally only pinned ones."""
        self._channel(args.channelId)
        found = [
            m
            for m in self.state.messages.values()
            if m.channelId == args.channelId and (m.pinned or not args.pinnedOnly)
        ]
        return {"messages": [dump(m) for m in found[: args.maxResults]]}

    @tool(writes=False)
    def search_messages(self, args: QueryArgs) -> dict:
        """Search channel messages and direct messages by text."""
        q = args.query.lower().strip()
        if not q:
            raise bad_request("query must not be empty")
        return {"messages": [dump(m) for m in self.state.messages.values() if q in m.text.lower()]}

    @tool(writes=False)
    def list_members(self, args: ListMembersArgs) -> dict:
        """List workspace members, optionally filtered by name, email, role or city."""
        q = (args.query or "").lower().strip()
        found = [
            m for m in self.state.members.values() if q in f"{m.name} {m.email} {m.role} {m.city}".lower()
        ]
        return {"members": [dump(m) for m in found]}

    @tool(writes=False)
    def get_member(self, args: MemberIdArgs) -> dict:
        """Get one member's profile."""
        return {"member": dump(self._member(args.memberId))}

    @tool(writes=False)
    def list_direct_messages(self, args: MemberIdArgs) -> dict:
        """List the direct-message conversation with one member."""
        self._member(args.memberId)
        convo = [
            m
            for m in self.state.messages.values()
            if m.recipientId == args.memberId or (m.recipientId == ME and m.authorId == args.memberId)
        ]
        return {"messages": [dump(m) for m in convo]}

    @tool(writes=True)
    def post_message(self, args: PostArgs) -> dict:
        """Post a message in a channel (not allowed in archived channels)."""
        channel = self._channel(args.channelId)
        if channel.archived:
            raise conflict(f"channel #{channel.name} is archived")
        return {"message": dump(self._new_message(args.text, channelId=channel.id))}

    @tool(writes=True)
    def send_direct_message(self, args: DirectArgs) -> dict:
        """Send a direct message to one member."""
        member = self._member(args.memberId)
        return {"message": dump(self._new_message(args.text, recipientId=member.id))}

    @tool(writes=True)
    def react_to_message(self, args: ReactArgs) -> dict:
        """Add an emoji reaction to a message."""
        message = self._msg(args.messageId)
        emoji = args.emoji.strip().strip(":")
        if not emoji:
            raise bad_request("emoji must not be empty")
        if emoji in message.reactions:
            raise conflict(f"you already reacted with :{emoji}:")
        message.reactions.append(emoji)
        return {"message": dump(message)}

    @tool(writes=True)
    def pin_message(self, args: MessageIdArgs) -> dict:
        """Pin a channel message so it shows in the channel's pinned items."""
        message = self._msg(args.messageId)
        if message.channelId is None:
            raise bad_request("only channel messages can be pinned")
        if message.pinned:
            raise conflict(f"message {message.id} is already pinned")
        message.pinned = True
        return {"message": dump(message)}

    @tool(writes=True)
    def create_channel(self, args: CreateChannelArgs) -> dict:
        """Create a channel (you are its first member); names are unique."""
        name = args.name.strip().lstrip("#").lower()
        if not name or " " in name:
            raise bad_request("channel name must be non-empty and contain no spaces")
        if any(c.name == name for c in self.state.channels.values()):
            raise conflict(f"channel #{name} already exists")
        cid = next_id("ch", self.state.channels)
        self.state.channels[cid] = Channel(id=cid, name=name, topic=args.topic, members=[ME])
        return {"channel": dump(self.state.channels[cid])}

    @tool(writes=True)
    def add_channel_member(self, args: ChannelMemberArgs) -> dict:
        """Add a member to a channel."""
        channel = self._channel(args.channelId)
        self._member(args.memberId)
        if args.memberId in channel.members:
            raise conflict(f"member {args.memberId} is already in #{channel.name}")
        channel.members.append(args.memberId)
        return {"channel": dump(channel)}

    @tool(writes=True)
    def set_channel_topic(self, args: TopicArgs) -> dict:
        """Change a channel's topic."""
        channel = self._channel(args.channelId)
        channel.topic = args.topic
        return {"channel": dump(channel)}

    @tool(writes=True)
    def archive_channel(self, args: ChannelIdArgs) -> dict:
        """Archive a channel: it is hidden and read-only."""
        channel = self._channel(args.channelId)
        if channel.archived:
            raise conflict(f"channel #{channel.name} is already archived")
        channel.archived = True
        return {"channel": dump(channel)}

    @classmethod
    def example_arguments(cls, state: ChatState) -> dict[str, dict]:
        channel = next(iter(state.channels.values()))
        member = next(iter(state.members.values()))
        message = next(iter(state.messages.values()))
        outsider = next(m for m in state.members if m not in channel.members)
        return {
            "list_channels": {"query": channel.name},
            "get_channel": {"channelId": channel.id},
            "list_channel_messages": {"channelId": channel.id},
            "search_messages": {"query": message.text.split()[-1]},
            "list_members": {"query": member.name.split()[0]},
            "get_member": {"memberId": member.id},
            "list_direct_messages": {"memberId": member.id},
            "post_message": {"channelId": channel.id, "text": "Morning all!"},
            "send_direct_message": {"memberId": member.id, "text": "Got a minute?"},
            "react_to_message": {"messageId": message.id, "emoji": "thumbsup"},
            "pin_message": {"messageId": message.id},
            "create_channel": {"name": "proj-newthing", "topic": "New thing"},
            "add_channel_member": {"channelId": channel.id, "memberId": outsider},
            "set_channel_topic": {"channelId": channel.id, "topic": "Release prep"},
            "archive_channel": {"channelId": channel.id},
        }

    @classmethod
    def links(cls) -> list[Link[ChatState]]:
        return [
            Hop(
                "member_email",
                "person",
                "email",
                _plant_member_email,
                relation="the email address in the chat profile of {of}",
            ),
            Hop(
                "member_city",
                "person",
                "city",
                _plant_member_city,
                relation="the work city in the chat profile of {of}",
            ),
            Hop(
                "member_by_email",
                "email",
                "person",
                _plant_member_by_email,
                relation="the full name of the chat member whose email is {of}",
            ),
            Hop(
                "channel_ticket",
                "title",
                "ticket_code",
                _plant_channel_ticket,
                relation="the ticket code linked to the chat channel whose topic is {of}",
            ),
            Action("post_in_channel", "title", _plant_post),
            Action("direct_message_person", "person", _plant_dm),
            Hop(
                "pinned_message_author",
                "title",
                "person",
                _plant_pinned_author,
                relation="the author of the pinned message in the chat channel whose topic is {of}",
            ),
            Action("add_member_by_email", "email", _plant_add_member),
            Action("set_topic_to_title", "title", _plant_set_topic),
            Action("archive_channel_by_topic", "title", _plant_archive_channel),
            Action("create_channel_with_person", "person", _plant_create_channel),
            Action("pin_message_with_code", "code", _plant_pin),
            Action("react_to_direct_message", "person", _plant_react),
        ]


def _drop_members(state: ChatState, text: str) -> None:
    """Make a member lookup unambiguous: remove members (and their traces) matching `text`."""
    low = text.lower()
    gone = {m.id for m in state.members.values() if low in f"{m.name} {m.email} {m.role} {m.city}".lower()}
    for mid in gone:
        del state.members[mid]
    for channel in state.channels.values():
        channel.members = [m for m in channel.members if m not in gone]
    for msg_id in [m.id for m in state.messages.values() if m.authorId in gone or m.recipientId in gone]:
        del state.messages[msg_id]


def _plant_member(state: ChatState, rng: random.Random, **fields) -> Member:
    name = fields.setdefault("name", vocab.person_name(rng))
    if "email" not in fields:  # keep emails unique: a lookup by email must find one member
        taken = {m.email for m in state.members.values()}
        fields["email"] = vocab.unique(rng, lambda r: vocab.email_for(name, r), taken)
    fields.setdefault("city", vocab.city(rng)[0])
    mid = next_id("usr", state.members)
    member = Member(id=mid, role=rng.choice(ROLES), **fields)
    state.members[mid] = member
    return member


def _plant_channel(state: ChatState, rng: random.Random, **fields) -> Channel:
    taken = {c.name for c in state.channels.values()}
    name = vocab.unique(rng, lambda r: f"proj-{r.choice(vocab.WORDS)}-{r.randint(100, 999)}", taken)
    cid = next_id("ch", state.channels)
    fields.setdefault("topic", vocab.title(rng))
    channel = Channel(id=cid, name=name, members=[ME], linkedTicket=vocab.code(rng, "TCK"), **fields)
    state.channels[cid] = channel
    return channel


def _plant_member_email(state: ChatState, rng: random.Random, value: str) -> HopPlan:
    _drop_members(state, value)
    member = _plant_member(state, rng, name=value)
    return query_hop(
        "list_members",
        value,
        ("members", 0, "email"),
        member.email,
        "look up that person in the team chat directory and note their email address",
    )


def _plant_member_city(state: ChatState, rng: random.Random, value: str) -> HopPlan:
    _drop_members(state, value)
    member = _plant_member(state, rng, name=value)
    return query_hop(
        "list_members",
        value,
        ("members", 0, "city"),
        member.city,
        "look up that person in the team chat directory and note the city they work from",
    )


def _plant_member_by_email(state: ChatState, rng: random.Random, value: str) -> HopPlan:
    _drop_members(state, value)
    member = _plant_member(state, rng, email=value)
    return query_hop(
        "list_members",
        value,
        ("members", 0, "name"),
        member.name,
        "find the team chat member with that email address and note their full name",
    )


def _plant_channel_ticket(state: ChatState, rng: random.Random, value: str) -> HopPlan:
    low = value.lower()
    for cid in [c.id for c in state.channels.values() if low in f"{c.name} {c.topic}".lower()]:
        del state.channels[cid]
    channel = _plant_channel(state, rng, topic=value)
    call = PlannedCall(
        "list_channels",
        {"query": value},
        inputs={"query": "{value}"},
        reveals=("channels", 0, "linkedTicket"),
    )
    return HopPlan(
        [call],
        channel.linkedTicket,
        "find the team chat channel whose topic is that title and note the ticket code linked to it",
    )


def _plant_post(state: ChatState, rng: random.Random, value: str) -> ActionPlan:
    channel = _plant_channel(state, rng)
    calls = [
        PlannedCall("list_channels", {"query": channel.name}),
        PlannedCall(
            "post_message",
            {"channelId": None, "text": f"Heads-up: {value} is next on the agenda."},
            inputs={"text": "Heads-up: {value} is next on the agenda."},
            bind={"channelId": (0, ("channels", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "messages",
        f"a message mentioning '{value}' is posted in #{channel.name}",
        channelId=channel.id,
        text=("icontains", value),
    )
    return ActionPlan(
        calls, [crit], f"post a message mentioning that title in the #{channel.name} team chat channel"
    )


def _plant_dm(state: ChatState, rng: random.Random, value: str) -> ActionPlan:
    _drop_members(state, value)
    member = _plant_member(state, rng, name=value)
    text = f"Can you review {vocab.code(rng, 'PR')} today?"
    calls = [
        PlannedCall("list_members", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "send_direct_message",
            {"memberId": None, "text": text},
            bind={"memberId": (0, ("members", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "messages", f"{value} got the direct message '{text}'", recipientId=member.id, text=text
    )
    return ActionPlan(calls, [crit], f"send that person a direct message in team chat saying '{text}'")


def _plant_add_member(state: ChatState, rng: random.Random, value: str) -> ActionPlan:
    _drop_members(state, value)
    member = _plant_member(state, rng, email=value)
    channel = _plant_channel(state, rng)
    calls = [
        PlannedCall("list_members", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall("list_channels", {"query": channel.name}),
        PlannedCall(
            "add_channel_member",
            {"channelId": None, "memberId": None},
            bind={"channelId": (1, ("channels", 0, "id")), "memberId": (0, ("members", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "channels",
        f"{value} is a member of #{channel.name}",
        name=channel.name,
        members=("contains", member.id),
    )
    return ActionPlan(
        calls, [crit], f"add the team chat member with that email address to the #{channel.name} channel"
    )


def _drop_channels(state: ChatState, text: str) -> None:
    """Make a channel lookup unambiguous: remove channels (and their posts) whose name or topic has `text`."""
    low = text.lower()
    gone = {c.id for c in state.channels.values() if low in f"{c.name} {c.topic}".lower()}
    for cid in gone:
        del state.channels[cid]
    for msg_id in [m.id for m in state.messages.values() if m.channelId in gone]:
        del state.messages[msg_id]


def _plant_message(state: ChatState, rng: random.Random, author: str, text: str, **where) -> ChatMessage:
    msg_id = next_id("m", state.messages)
    day = f"{vocab.date(rng)}T{rng.randint(8, 18):02d}:{rng.randint(0, 59):02d}"
    message = ChatMessage(id=msg_id, authorId=author, text=text, date=day, **where)
    state.messages[msg_id] = message
    return message


def _plant_pinned_author(state: ChatState, rng: random.Random, value: str) -> HopPlan:
    _drop_channels(state, value)
    author = _plant_member(
        state, rng, name=vocab.unique(rng, vocab.person_name, {m.name for m in state.members.values()})
    )
    chatter = next((m for m in state.members.values() if m.id != author.id), None)
    channel = _plant_channel(state, rng, topic=value)
    channel.members.append(author.id)
    if chatter is not None:
        channel.members.append(chatter.id)
        _plant_message(state, rng, chatter.id, vocab.sentence(rng), channelId=channel.id)
    _plant_message(
        state, rng, author.id, f"Agenda and owners: {vocab.sentence(rng)}", channelId=channel.id, pinned=True
    )
    calls = [
        PlannedCall("list_channels", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "list_channel_messages",
            {"channelId": None, "pinnedOnly": True},
            bind={"channelId": (0, ("channels", 0, "id"))},
        ),
        PlannedCall(
            "get_member",
            {"memberId": None},
            bind={"memberId": (1, ("messages", 0, "authorId"))},
            reveals=("member", "name"),
        ),
    ]
    phrase = "open the team chat channel whose topic is that title and note who wrote its pinned message"
    return HopPlan(calls, author.name, phrase)


def _plant_set_topic(state: ChatState, rng: random.Random, value: str) -> ActionPlan:
    channel = _plant_channel(state, rng)
    calls = [
        PlannedCall("list_channels", {"query": channel.name}),
        PlannedCall(
            "set_channel_topic",
            {"channelId": None, "topic": value},
            inputs={"topic": "{value}"},
            bind={"channelId": (0, ("channels", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "channels",
        f"the topic of #{channel.name} is '{value}'",
        id=channel.id,
        name=channel.name,
        topic=value,
    )
    return ActionPlan(calls, [crit], f"set the topic of the #{channel.name} team chat channel to that title")


def _plant_archive_channel(state: ChatState, rng: random.Random, value: str) -> ActionPlan:
    _drop_channels(state, value)
    channel = _plant_channel(state, rng, topic=value)
    calls = [
        PlannedCall("list_channels", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall("archive_channel", {"channelId": None}, bind={"channelId": (0, ("channels", 0, "id"))}),
    ]
    crit = expect_record(
        "channels", f"the channel #{channel.name} about '{value}' is archived", id=channel.id, archived=True
    )
    return ActionPlan(calls, [crit], "archive the team chat channel whose topic is that title")


def _plant_create_channel(state: ChatState, rng: random.Random, value: str) -> ActionPlan:
    _drop_members(state, value)
    member = _plant_member(state, rng, name=value)
    taken = {c.name for c in state.channels.values()}
    name = vocab.unique(rng, lambda r: f"team-{r.choice(vocab.WORDS)}-{r.randint(100, 999)}", taken)
    topic = vocab.title(rng)
    calls = [
        PlannedCall("create_channel", {"name": name, "topic": topic}),
        PlannedCall("list_members", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "add_channel_member",
            {"channelId": None, "memberId": None},
            bind={"channelId": (0, ("channel", "id")), "memberId": (1, ("members", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "channels",
        f"a channel #{name} exists with {value} as a member",
        name=name,
        members=("contains", member.id),
    )
    phrase = f"create a team chat channel named '{name}' with the topic '{topic}' and add that person to it"
    return ActionPlan(calls, [crit], phrase)


def _plant_pin(state: ChatState, rng: random.Random, value: str) -> ActionPlan:
    low = value.lower()
    for msg_id in [m.id for m in state.messages.values() if low in m.text.lower()]:
        del state.messages[msg_id]
    channel = _plant_channel(state, rng)
    author = next((m for m in state.members.values()), None) or _plant_member(state, rng)
    channel.members.append(author.id)
    message = _plant_message(
        state, rng, author.id, f"Please use {value} when you file the expenses.", channelId=channel.id
    )
    calls = [
        PlannedCall("search_messages", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall("pin_message", {"messageId": None}, bind={"messageId": (0, ("messages", 0, "id"))}),
    ]
    crit = expect_record("messages", f"the message mentioning {value} is pinned", id=message.id, pinned=True)
    return ActionPlan(calls, [crit], "pin the team chat message that mentions that reference code")


def _plant_react(state: ChatState, rng: random.Random, value: str) -> ActionPlan:
    _drop_members(state, value)
    member = _plant_member(state, rng, name=value)
    message = _plant_message(
        state, rng, member.id, f"I sent you the draft for {vocab.title(rng)}.", recipientId=ME
    )
    emoji = rng.choice(("thumbsup", "eyes", "white_check_mark", "tada"))
    calls = [
        PlannedCall("list_members", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall("list_direct_messages", {"memberId": None}, bind={"memberId": (0, ("members", 0, "id"))}),
        PlannedCall(
            "react_to_message",
            {"messageId": None, "emoji": emoji},
            bind={"messageId": (1, ("messages", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "messages",
        f"the direct message from {value} has a :{emoji}: reaction",
        id=message.id,
        reactions=("contains", emoji),
    )
    phrase = f"react with :{emoji}: to the direct message that person sent you in team chat"
    return ActionPlan(calls, [crit], phrase)


register_service(ChatService)
