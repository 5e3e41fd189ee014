"""The MCP interface of a world day: chat, direct-message, email, flights and accounts tools (official `mcp` SDK 2.x).

Tools (over the day folder's chat, dm, mail, flights and accounts databases):

    chat_list_channels()                 channels with topic and message count
    chat_read_channel(channel, limit)    the last `limit` messages of a channel, oldest first
    chat_post(channel, body)             post as the persona
    dm_list_threads()                    peers with message count and last activity
    dm_read(peer)                        one conversation, oldest first
    dm_send(peer, body)                  an outgoing direct message
    mail_list(folder)                    inbox | sent | archive, newest first
    mail_read(message_id)                one message (marks it read)
    mail_send(to, subject, body)         a 'sent' message from the persona's address
    flights_list()                       every booking: confirmation, route, departure, status
    flights_get(confirmation)            one booking
    flights_change(confirmation, depart_at)  move a confirmed booking to another departure
    flights_cancel(confirmation)         cancel a confirmed booking
    flights_book(origin, destination, depart_at)  a new booking for the persona
    accounts_list()                      the persona's logins (usernames)
    accounts_set_password(username, new_password)  set a login's password

Every tool returns one JSON object (lists sit under a key such as ``messages``), as one text
content block plus ``structured_content``. Bad input (an unknown channel, peer or message, an empty body) comes back as an MCP tool error
(``is_error=True``) whose text says what was wrong. Transports: in memory (``mcp.Client(server)``),
streamable HTTP on 127.0.0.1 (`serve_mcp`, path ``/mcp``) or stdio (``server.run()``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from envpipeline.errors import MissingExtraError
from envpipeline.worlds.interfaces._serving import BackgroundServer
from envpipeline.worlds.lifestore import LifeStore
from envpipeline.worlds.worldstore import WorldInputError

try:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError as missing:
    raise MissingExtraError("worlds", missing, needed_by=__name__) from missing

#: Every tool the server exposes (health checks compare against it).
TOOL_NAMES = (
    "chat_list_channels",
    "chat_read_channel",
    "chat_post",
    "dm_list_threads",
    "dm_read",
    "dm_send",
    "mail_list",
    "mail_read",
    "mail_send",
    "flights_list",
    "flights_get",
    "flights_change",
    "flights_cancel",
    "flights_book",
    "accounts_list",
    "accounts_set_password",
)


def _call(action: Callable[[], Any]) -> Any:
    """Run a store action, turning WorldInputError into a ToolError with the same message."""
    try:
        return action()
    except WorldInputError as e:
        raise ToolError(str(e)) from e


def world_instructions(persona_id: str) -> str:
    """The server's instructions for the persona whose world it serves."""
    return (
        f"Chat, direct messages, email, flight bookings and logins of {persona_id}. "
        "Read before you write; "
        "channel names have no leading '#'."
    )


def follow_persona(server: MCPServer, persona_id: str) -> None:
    """Point a server's instructions at `persona_id` (clients read them when they initialize).

    A pooled server is rebound to other worlds through its store; rebuilding it tool by tool for
    every new persona cost about 60 ms of CPU each time. MCPServer exposes its instructions
    read-only, so they are set on the low-level server it wraps (mcp 2.3.0; a test checks what a
    client receives)."""
    server._lowlevel_server.instructions = world_instructions(persona_id)  # pyright: ignore[reportPrivateUsage]


def create_mcp_server(day_dir: str | Path | LifeStore, clock: Callable[[], str] | None = None) -> MCPServer:
    """An MCPServer whose tools act on one day folder (or on `day_dir` itself when it is a store:
    the tools then follow the store's `rebind`)."""
    store = day_dir if isinstance(day_dir, LifeStore) else LifeStore(day_dir, clock)
    root = logging.getLogger()
    saved = root.level, list(root.handlers)
    server = MCPServer(
        name="wildawm-world", instructions=world_instructions(store.persona_id), log_level="WARNING"
    )
    # MCPServer calls logging.basicConfig; keep the host's logging as it was
    root.setLevel(saved[0])
    root.handlers[:] = saved[1]

    @server.tool()
    def chat_list_channels() -> dict[str, Any]:
        """List the chat channels with their topic and number of messages."""
        return {"channels": _call(store.channels)}

    @server.tool()
    def chat_read_channel(channel: str, limit: int = 20) -> dict[str, Any]:
        """Read the last `limit` messages of a chat channel (oldest first)."""
        return {"channel": channel, "messages": _call(lambda: store.channel_messages(channel, limit))}

    @server.tool()
    def chat_post(channel: str, body: str) -> dict[str, Any]:
        """Post a message to a chat channel as the persona."""
        return _call(lambda: store.chat_post(channel, body))

    @server.tool()
    def dm_list_threads() -> dict[str, Any]:
        """List direct-message conversations: peer, number of messages, last activity."""
        return {"threads": _call(store.dm_threads)}

    @server.tool()
    def dm_read(peer: str) -> dict[str, Any]:
        """Read the whole direct-message conversation with `peer` (oldest first)."""
        return {"peer": peer, "messages": _call(lambda: store.dm_read(peer))}

    @server.tool()
    def dm_send(peer: str, body: str) -> dict[str, Any]:
        """Send a direct message to `peer` (starts a conversation if there is none)."""
        return _call(lambda: store.dm_send(peer, body))

    @server.tool()
    def mail_list(folder: str = "inbox") -> dict[str, Any]:
        """List the email messages of a folder (inbox, sent or archive), newest first, without bodies."""
        return {"folder": folder, "messages": _call(lambda: store.mail_list(folder))}

    @server.tool()
    def mail_read(message_id: int) -> dict[str, Any]:
        """Read one email message with its body; marks it read."""
        return _call(lambda: store.mail_read(message_id))

    @server.tool()
    def mail_send(to: str, subject: str, body: str) -> dict[str, Any]:
        """Send an email from the persona's address; `to` is one address or several separated by commas."""
        return _call(lambda: store.mail_send(to, subject, body))

    @server.tool()
    def flights_list() -> dict[str, Any]:
        """List every flight booking: confirmation, origin, destination, departure, status."""
        return {"bookings": _call(store.bookings)}

    @server.tool()
    def flights_get(confirmation: str) -> dict[str, Any]:
        """Read one flight booking by its confirmation code."""
        return _call(lambda: store.booking(confirmation))

    @server.tool()
    def flights_change(confirmation: str, depart_at: str) -> dict[str, Any]:
        """Move a confirmed booking to another departure (ISO date-time, e.g. 2026-03-12T09:25)."""
        return _call(lambda: store.booking_change(confirmation, depart_at))

    @server.tool()
    def flights_cancel(confirmation: str) -> dict[str, Any]:
        """Cancel a confirmed flight booking."""
        return _call(lambda: store.booking_cancel(confirmation))

    @server.tool()
    def flights_book(origin: str, destination: str, depart_at: str) -> dict[str, Any]:
        """Book a new flight for the persona; returns the booking with its confirmation code."""
        passenger = next((b["passenger"] for b in store.bookings() if b["passenger"]), store.author)
        return _call(lambda: store.booking_new(origin, destination, depart_at, passenger))

    @server.tool()
    def accounts_list() -> dict[str, Any]:
        """List the persona's login accounts (usernames; password hashes are never shown)."""
        return {"logins": _call(store.logins)}

    @server.tool()
    def accounts_set_password(username: str, new_password: str) -> dict[str, Any]:
        """Set the password of one login (at least 8 characters)."""
        return _call(lambda: store.set_password(username, new_password))

    return server


def serve_mcp(day_dir: str | Path, host: str = "127.0.0.1", port: int = 0) -> BackgroundServer:
    """Start the MCP server over streamable HTTP; the endpoint is ``<server.url>/mcp``."""
    app = create_mcp_server(day_dir).streamable_http_app(streamable_http_path="/mcp", host=host)
    server = BackgroundServer(app, host, port, name="world-mcp")
    server.start()
    return server
