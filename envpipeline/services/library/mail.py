"""Mail service (Outlook/Gmail-like): a mailbox with folders, messages and contacts."""

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

NOW = "2026-05-15T10:00"
OWNER = "me@example.com"
SYSTEM_FOLDERS = {"inbox": "Inbox", "sent": "Sent", "archive": "Archive", "trash": "Trash"}


class Folder(Record):
    id: str
    name: str


class Message(Record):
    id: str
    folderId: str
    sender: str
    senderName: str = ""
    to: list[str] = []
    subject: str
    body: str = ""
    date: str
    read: bool = False
    flagged: bool = False
    inReplyTo: str | None = None


class Contact(Record):
    id: str
    name: str
    email: str
    city: str = ""


class MailState(Strict):
    folders: dict[str, Folder] = {}
    messages: dict[str, Message] = {}
    contacts: dict[str, Contact] = {}


class NoArgs(ToolArgs):
    pass


class ListMessagesArgs(ToolArgs):
    folderId: Annotated[str | None, Field(description="folder id, e.g. inbox, sent, archive, trash")] = None
    unreadOnly: Annotated[bool, Field(description="only unread messages")] = False
    date: Annotated[str | None, Field(description="only messages received on this day (YYYY-MM-DD)")] = None
    maxResults: Annotated[int, Field(description="maximum messages to return", ge=1, le=100)] = 20


class QueryArgs(ToolArgs):
    query: Annotated[str, Field(description="text to search for")]


class MessageIdArgs(ToolArgs):
    messageId: Annotated[str, Field(description="message id")]


class SendArgs(ToolArgs):
    to: Annotated[str, Field(description="recipient email address(es), comma separated")]
    subject: Annotated[str, Field(description="subject line")]
    body: Annotated[str, Field(description="message text")] = ""


class ReplyArgs(ToolArgs):
    messageId: Annotated[str, Field(description="id of the message replied to")]
    body: Annotated[str, Field(description="reply text")]


class ForwardArgs(ToolArgs):
    messageId: Annotated[str, Field(description="id of the message to forward")]
    to: Annotated[str, Field(description="recipient email address(es), comma separated")]
    note: Annotated[str, Field(description="text added above the forwarded message")] = ""


class MoveArgs(ToolArgs):
    messageId: Annotated[str, Field(description="message id")]
    folderId: Annotated[str, Field(description="destination folder id")]


class MarkReadArgs(ToolArgs):
    messageId: Annotated[str, Field(description="message id")]
    read: Annotated[bool, Field(description="true marks read, false marks unread")] = True


class FlagArgs(ToolArgs):
    messageId: Annotated[str, Field(description="message id")]
    flagged: Annotated[bool, Field(description="true flags, false clears the flag")] = True


class CreateFolderArgs(ToolArgs):
    name: Annotated[str, Field(description="folder name")]


class AddContactArgs(ToolArgs):
    name: Annotated[str, Field(description="full name")]
    email: Annotated[str, Field(description="email address")]
    city: Annotated[str, Field(description="city the contact lives in")] = ""


def _addresses(text: str) -> list[str]:
    found = [a.strip() for a in text.split(",") if a.strip()]
    if not found:
        raise bad_request("at least one recipient is required")
    for address in found:
        if "@" not in address:
            raise bad_request(f"invalid email '{address}'")
    return found


class MailService(Service[MailState]):
    name = "mail"
    title = "Mail"
    domain = "communication"

    @classmethod
    def generate_state(cls, rng: random.Random) -> MailState:
        folders = {fid: Folder(id=fid, name=n) for fid, n in SYSTEM_FOLDERS.items()}
        contacts: dict[str, Contact] = {}
        taken: set[str] = set()
        for _ in range(rng.randint(4, 7)):
            name = vocab.unique(rng, vocab.person_name, taken)
            cid = next_id("con", contacts)
            contacts[cid] = Contact(
                id=cid, name=name, email=vocab.email_for(name, rng), city=vocab.city(rng)[0]
            )
        people = list(contacts.values())
        messages: dict[str, Message] = {}
        for i in range(rng.randint(5, 9)):
            who = rng.choice(people)
            incoming = i < 3 or rng.random() < 0.7
            mid = next_id("msg", messages)
            messages[mid] = Message(
                id=mid,
                folderId="inbox" if incoming else rng.choice(("sent", "archive")),
                sender=who.email if incoming else OWNER,
                senderName=who.name if incoming else "Me",
                to=[OWNER] if incoming else [who.email],
                subject=vocab.title(rng),
                body=vocab.sentence(rng),
                date=f"{vocab.date(rng)}T{rng.randint(7, 19):02d}:{rng.choice((0, 15, 30, 45)):02d}",
                read=i > 0 and rng.random() < 0.5,
            )
        return MailState(folders=folders, messages=messages, contacts=contacts)

    def _message(self, message_id: str) -> Message:
        message = self.state.messages.get(message_id)
        if message is None:
            raise not_found("message", message_id)
        return message

    def _folder(self, folder_id: str) -> Folder:
        folder = self.state.folders.get(folder_id)
        if folder is None:
            raise not_found("folder", folder_id)
        return folder

    def _store(self, **fields) -> Message:
        mid = next_id("msg", self.state.messages)
        message = Message(
            id=mid, folderId="sent", sender=OWNER, senderName="Me", date=NOW, read=True, **fields
        )
        self.state.messages[mid] = message
        return message

    @tool(writes=False)
    def list_folders(self, args: NoArgs) -> dict:
        """List the mailbox folders with their message and unread counts."""
        out = []
        for f in self.state.folders.values():
            inside = [m for m in self.state.messages.values() if m.folderId == f.id]
            out.append({**dump(f), "total": len(inside), "unread": sum(not m.read for m in inside)})
        return {"folders": out}

    @tool(writes=False)
    def list_messages(self, args: ListMessagesArgs) -> dict:
        """List messages, optionally of one folder, unread only or received on one day."""
        if args.folderId is not None:
            self._folder(args.folderId)
        found = [
            m
            for m in self.state.messages.values()
            if (args.folderId is None or m.folderId == args.folderId)
            and (not args.unreadOnly or not m.read)
            and (not args.date or m.date.startswith(args.date))
        ]
        return {"messages": [dump(m) for m in found[: args.maxResults]]}

    @tool(writes=False)
    def get_message(self, args: MessageIdArgs) -> dict:
        """Get one message by id (does not mark it read)."""
        return {"message": dump(self._message(args.messageId))}

    @tool(writes=False)
    def search_messages(self, args: QueryArgs) -> dict:
        """Search messages by text in subject, body, sender name or any address."""
        q = args.query.lower().strip()
        if not q:
            raise bad_request("query must not be empty")
        hits = [m for m in self.state.messages.values() if q in _message_text(m)]
        return {"messages": [dump(m) for m in hits]}

    @tool(writes=True)
    def send_message(self, args: SendArgs) -> dict:
        """Send a new email; a copy is stored in the Sent folder."""
        if not args.subject.strip():
            raise bad_request("subject must not be empty")
        message = self._store(to=_addresses(args.to), subject=args.subject, body=args.body)
        return {"message": dump(message)}

    @tool(writes=True)
    def reply(self, args: ReplyArgs) -> dict:
        """Reply to a message's sender; the original is marked read."""
        original = self._message(args.messageId)
        if not args.body.strip():
            raise bad_request("body must not be empty")
        to = [original.sender] if original.sender != OWNER else list(original.to)
        subject = original.subject if original.subject.startswith("Re: ") else f"Re: {original.subject}"
        original.read = True
        message = self._store(to=to, subject=subject, body=args.body, inReplyTo=original.id)
        return {"message": dump(message)}

    @tool(writes=True)
    def forward_message(self, args: ForwardArgs) -> dict:
        """Forward a message to other recipients with an optional note."""
        original = self._message(args.messageId)
        body = f"{args.note}\n\n---------- Forwarded message ----------\n{original.body}".strip()
        message = self._store(to=_addresses(args.to), subject=f"Fwd: {original.subject}", body=body)
        return {"message": dump(message)}

    @tool(writes=True)
    def move_message(self, args: MoveArgs) -> dict:
        """Move a message to another folder (e.g. archive)."""
        message = self._message(args.messageId)
        self._folder(args.folderId)
        if message.folderId == args.folderId:
            raise conflict(f"message {args.messageId} is already in {args.folderId}")
        message.folderId = args.folderId
        return {"message": dump(message)}

    @tool(writes=True)
    def mark_read(self, args: MarkReadArgs) -> dict:
        """Mark a message as read (or unread with read=false)."""
        message = self._message(args.messageId)
        message.read = args.read
        return {"message": dump(message)}

    @tool(writes=True)
    def flag_message(self, args: FlagArgs) -> dict:
        """Flag a message for follow-up (or clear the flag with flagged=false)."""
        message = self._message(args.messageId)
        message.flagged = args.flagged
        return {"message": dump(message)}

    @tool(writes=True)
    def delete_message(self, args: MessageIdArgs) -> dict:
        """Delete a message: moves it to Trash, or removes it for good if already in Trash."""
        message = self._message(args.messageId)
        if message.folderId == "trash":
            del self.state.messages[message.id]
            return {"deleted": message.id, "permanent": True}
        message.folderId = "trash"
        return {"deleted": message.id, "permanent": False}

    @tool(writes=True)
    def create_folder(self, args: CreateFolderArgs) -> dict:
        """Create a new mail folder; names must be unique."""
        name = args.name.strip()
        if not name:
            raise bad_request("name must not be empty")
        if any(f.name.lower() == name.lower() for f in self.state.folders.values()):
            raise conflict(f"a folder named '{name}' already exists")
        fid = next_id("fld", self.state.folders)
        self.state.folders[fid] = Folder(id=fid, name=name)
        return {"folder": dump(self.state.folders[fid])}

    @tool(writes=False)
    def search_contacts(self, args: QueryArgs) -> dict:
        """Search the address book by name, email or city."""
        q = args.query.lower().strip()
        if not q:
            raise bad_request("query must not be empty")
        hits = [c for c in self.state.contacts.values() if q in f"{c.name} {c.email} {c.city}".lower()]
        return {"contacts": [dump(c) for c in hits]}

    @tool(writes=True)
    def add_contact(self, args: AddContactArgs) -> dict:
        """Add a contact to the address book; emails must be unique."""
        email = _addresses(args.email)[0]
        if any(c.email.lower() == email.lower() for c in self.state.contacts.values()):
            raise conflict(f"a contact with email {email} already exists")
        cid = next_id("con", self.state.contacts)
        self.state.contacts[cid] = Contact(id=cid, name=args.name, email=email, city=args.city)
        return {"contact": dump(self.state.contacts[cid])}

    @classmethod
    def example_arguments(cls, state: MailState) -> dict[str, dict]:
        first = next(iter(state.messages.values()))
        contact = next(iter(state.contacts.values()))
        return {
            "list_folders": {},
            "list_messages": {"folderId": "inbox", "unreadOnly": True},
            "get_message": {"messageId": first.id},
            "search_messages": {"query": first.subject.split()[0]},
            "send_message": {"to": "new.person@example.com", "subject": "Hello", "body": "Hi there."},
            "reply": {"messageId": first.id, "body": "Thanks, noted."},
            "forward_message": {"messageId": first.id, "to": "boss@example.com", "note": "FYI"},
            "move_message": {"messageId": first.id, "folderId": "archive"},
            "mark_read": {"messageId": first.id, "read": True},
            "flag_message": {"messageId": first.id, "flagged": True},
            "delete_message": {"messageId": first.id},
            "create_folder": {"name": "Receipts"},
            "search_contacts": {"query": contact.name.split()[0]},
            "add_contact": {"name": "Ada Lovelace", "email": "ada.lovelace@example.com", "city": "Cork"},
        }

    @classmethod
    def links(cls) -> list[Link[MailState]]:
        return [
            Hop(
                "subject_sender",
                "title",
                "email",
                _plant_subject_sender,
                relation="the sender address of the email with the subject {of}",
            ),
            Hop(
                "sender_subject",
                "email",
                "title",
                _plant_sender_subject,
                relation="the subject of the email sent from {of}",
            ),
            Hop(
                "contact_email",
                "person",
                "email",
                _plant_contact_email,
                relation="the email address of {of} in the address book",
            ),
            Hop(
                "contact_city",
                "email",
                "city",
                _plant_contact_city,
                relation="the city of the address-book contact whose email is {of}",
            ),
            Hop(
                "mail_on_date",
                "date",
                "title",
                _plant_mail_on_date,
                relation="the subject of the email received on {of}",
            ),
            Action("send_to_email", "email", _plant_send_to),
            Action("reply_to_subject", "title", _plant_reply),
            Action("archive_from_person", "person", _plant_archive),
            Action("flag_subject", "title", _plant_flag),
            Action("forward_to_email", "email", _plant_forward),
            Action("add_contact_in_city", "city", _plant_add_contact),
            Action("delete_on_date", "date", _plant_delete_on_date),
            Action("mark_read_from_email", "email", _plant_mark_read),
            Action("file_into_new_folder", "title", _plant_file_into_folder),
        ]


def _message_text(m: Message) -> str:
    return f"{m.subject} {m.body} {m.sender} {m.senderName} {' '.join(m.to)}".lower()


def _drop_messages(state: MailState, text: str) -> None:
    """Make a lookup unambiguous: remove messages whose text or date already mentions `text`."""
    low = text.lower()
    for mid in [m.id for m in state.messages.values() if low in _message_text(m) or m.date.startswith(text)]:
        del state.messages[mid]


def _drop_contacts(state: MailState, text: str) -> None:
    low = text.lower()
    for cid in [c.id for c in state.contacts.values() if low in f"{c.name} {c.email} {c.city}".lower()]:
        del state.contacts[cid]


def _incoming(state: MailState, rng: random.Random, **fields) -> Message:
    if "sender" not in fields:
        who = fields.get("senderName") or vocab.person_name(rng)
        fields = {"senderName": who, "sender": vocab.email_for(who, rng), **fields}
    fields.setdefault("subject", vocab.title(rng))
    fields.setdefault("date", f"{vocab.date(rng)}T08:45")
    mid = next_id("msg", state.messages)
    message = Message(id=mid, folderId="inbox", to=[OWNER], body=vocab.sentence(rng), **fields)
    state.messages[mid] = message
    return message


def _plant_subject_sender(state: MailState, rng: random.Random, value: str) -> HopPlan:
    _drop_messages(state, value)
    message = _incoming(state, rng, subject=value)
    return query_hop(
        "search_messages",
        value,
        ("messages", 0, "sender"),
        message.sender,
        "find the email with that title in the mailbox and note the sender's email address",
    )


def _plant_sender_subject(state: MailState, rng: random.Random, value: str) -> HopPlan:
    _drop_messages(state, value)
    message = _incoming(state, rng, sender=value, senderName=vocab.person_name(rng))
    return query_hop(
        "search_messages",
        value,
        ("messages", 0, "subject"),
        message.subject,
        "find the email sent from that email address and note its subject",
    )


def _plant_contact_email(state: MailState, rng: random.Random, value: str) -> HopPlan:
    _drop_contacts(state, value)
    email = vocab.email_for(value, rng)
    _drop_contacts(state, email)
    cid = next_id("con", state.contacts)
    state.contacts[cid] = Contact(id=cid, name=value, email=email, city=vocab.city(rng)[0])
    return query_hop(
        "search_contacts",
        value,
        ("contacts", 0, "email"),
        email,
        "look up that person in the mail address book and note their email address",
    )


def _plant_contact_city(state: MailState, rng: random.Random, value: str) -> HopPlan:
    _drop_contacts(state, value)
    place = vocab.city(rng)[0]
    cid = next_id("con", state.contacts)
    state.contacts[cid] = Contact(id=cid, name=vocab.person_name(rng), email=value, city=place)
    return query_hop(
        "search_contacts",
        value,
        ("contacts", 0, "city"),
        place,
        "look up that email address in the mail address book and note the contact's city",
    )


def _plant_mail_on_date(state: MailState, rng: random.Random, value: str) -> HopPlan:
    _drop_messages(state, value)
    message = _incoming(state, rng, date=f"{value}T08:45")
    call = PlannedCall(
        "list_messages",
        {"folderId": "inbox", "date": value},
        inputs={"date": "{value}"},
        reveals=("messages", 0, "subject"),
    )
    return HopPlan(
        [call],
        message.subject,
        "check the mail inbox for the email received on that date and note its subject",
    )


def _plant_send_to(state: MailState, rng: random.Random, value: str) -> ActionPlan:
    subject = f"Quote {vocab.code(rng, 'Q')}"
    body = "Please find the details attached."
    call = PlannedCall(
        "send_message", {"to": value, "subject": subject, "body": body}, inputs={"to": "{value}"}
    )
    crit = expect_record(
        "messages",
        f"an email '{subject}' was sent to {value}",
        folderId="sent",
        subject=subject,
        to=("addresses", value),
    )
    return ActionPlan([call], [crit], f"send an email with subject '{subject}' to that email address")


def _plant_reply(state: MailState, rng: random.Random, value: str) -> ActionPlan:
    _drop_messages(state, value)
    _incoming(state, rng, subject=value)
    body = "Thanks, confirmed."
    calls = [
        PlannedCall("search_messages", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "reply", {"messageId": None, "body": body}, bind={"messageId": (0, ("messages", 0, "id"))}
        ),
    ]
    crit = expect_record(
        "messages", f"a reply to '{value}' was sent", folderId="sent", subject=f"Re: {value}"
    )
    return ActionPlan(calls, [crit], f"reply '{body}' to the email with that title")


def _plant_archive(state: MailState, rng: random.Random, value: str) -> ActionPlan:
    _drop_messages(state, value)
    _incoming(state, rng, senderName=value)
    calls = [
        PlannedCall("search_messages", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            "move_message",
            {"messageId": None, "folderId": "archive"},
            bind={"messageId": (0, ("messages", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "messages", f"the email from {value} is archived", senderName=value, folderId="archive"
    )
    return ActionPlan(calls, [crit], "move the email from that person to the mail Archive folder")


def _message_action(tool_name: str, value: str, arguments: dict) -> list[PlannedCall]:
    """Search the one message matching the carried value, then call `tool_name` on it."""
    return [
        PlannedCall("search_messages", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall(
            tool_name, {"messageId": None, **arguments}, bind={"messageId": (0, ("messages", 0, "id"))}
        ),
    ]


def _plant_flag(state: MailState, rng: random.Random, value: str) -> ActionPlan:
    _drop_messages(state, value)
    message = _incoming(state, rng, subject=value)
    calls = _message_action("flag_message", value, {"flagged": True})
    crit = expect_record(
        "messages", f"the email '{value}' is flagged", id=message.id, subject=value, flagged=True
    )
    return ActionPlan(calls, [crit], "flag the email with that title for follow-up")


def _plant_forward(state: MailState, rng: random.Random, value: str) -> ActionPlan:
    _drop_messages(state, value)
    subject = vocab.unique(rng, vocab.title, {m.subject for m in state.messages.values()})
    _drop_messages(state, subject)
    _incoming(state, rng, subject=subject)
    note = "FYI, see below."
    calls = [
        PlannedCall("search_messages", {"query": subject}),
        PlannedCall(
            "forward_message",
            {"messageId": None, "to": value, "note": note},
            inputs={"to": "{value}"},
            bind={"messageId": (0, ("messages", 0, "id"))},
        ),
    ]
    crit = expect_record(
        "messages",
        f"the email '{subject}' was forwarded to {value}",
        folderId="sent",
        subject=f"Fwd: {subject}",
        to=("addresses", value),
    )
    return ActionPlan(calls, [crit], f"forward the email '{subject}' to that email address")


def _plant_add_contact(state: MailState, rng: random.Random, value: str) -> ActionPlan:
    name = vocab.unique(rng, vocab.person_name, {c.name for c in state.contacts.values()})
    email = vocab.email_for(name, rng)
    _drop_contacts(state, name)
    _drop_contacts(state, email)
    call = PlannedCall(
        "add_contact", {"name": name, "email": email, "city": value}, inputs={"city": "{value}"}
    )
    crit = expect_record(
        "contacts", f"{name} ({email}) is in the address book in {value}", name=name, email=email, city=value
    )
    return ActionPlan(
        [call], [crit], f"add {name} ({email}) to the mail address book, with that city as their city"
    )


def _plant_delete_on_date(state: MailState, rng: random.Random, value: str) -> ActionPlan:
    _drop_messages(state, value)
    message = _incoming(state, rng, date=f"{value}T08:45")
    calls = [
        PlannedCall("list_messages", {"folderId": "inbox", "date": value}, inputs={"date": "{value}"}),
        PlannedCall("delete_message", {"messageId": None}, bind={"messageId": (0, ("messages", 0, "id"))}),
    ]
    crit = expect_record(
        "messages",
        f"the email '{message.subject}' received on {value} is in Trash",
        id=message.id,
        subject=message.subject,
        folderId="trash",
    )
    return ActionPlan(calls, [crit], "delete the email received on that date (move it to Trash)")


def _plant_mark_read(state: MailState, rng: random.Random, value: str) -> ActionPlan:
    _drop_messages(state, value)
    message = _incoming(state, rng, sender=value, senderName=vocab.person_name(rng), read=False)
    calls = _message_action("mark_read", value, {"read": True})
    crit = expect_record(
        "messages", f"the email from {value} is marked read", id=message.id, sender=value, read=True
    )
    return ActionPlan(calls, [crit], "mark the unread email from that email address as read")


def _plant_file_into_folder(state: MailState, rng: random.Random, value: str) -> ActionPlan:
    _drop_messages(state, value)
    for fid in [f.id for f in state.folders.values() if f.name.lower() == value.lower()]:
        del state.folders[fid]
        for mid in [m.id for m in state.messages.values() if m.folderId == fid]:
            del state.messages[mid]
    message = _incoming(state, rng, subject=value)
    calls = [
        PlannedCall("search_messages", {"query": value}, inputs={"query": "{value}"}),
        PlannedCall("create_folder", {"name": value}, inputs={"name": "{value}"}),
        PlannedCall(
            "move_message",
            {"messageId": None, "folderId": None},
            bind={"messageId": (0, ("messages", 0, "id")), "folderId": (1, ("folder", "id"))},
        ),
    ]
    criteria = [
        expect_record("folders", f"a mail folder named '{value}' exists", name=value),
        expect_record(
            "messages",
            f"the email '{value}' is filed in a new folder",
            id=message.id,
            subject=value,
            folderId=("contains", "fld_"),
        ),
    ]
    return ActionPlan(
        calls,
        criteria,
        "create a mail folder named after that title and move the email with that title into it",
    )


register_service(MailService)
