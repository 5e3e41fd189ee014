"""The MCP interface of a world day: chat, direct-message and email tools (official `mcp` SDK 2.x).

Tools (all over the day folder's ``apps/chat.sqlite``, ``apps/dm.sqlite`` and ``apps/mail.sqlite``):

    chat_list_channels()                 channels with topic and message count
    chat_read_channel(channel, limit)    the last `limit` messages of a channel, oldest first
    chat_post(channel, body)             post as the persona
    dm_list_threads()                    peers with message count and last activity
    dm_read(peer)                        one conversation, oldest first
    dm_send(peer, body)                  an outgoing direct message
    mail_list(folder)                    inbox | sent | archive, newest first
    mail_read(message_id)                one message (marks it read)
    mail_send(to, subject, body)         a 'sent' message from the persona's address

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
from envpipeline.worlds.worldstore import WorldInputError, WorldStore

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
)


def _call(action: Callable[[], Any]) -> Any:
    """Run a store action, turning WorldInputError into a ToolError with the same message."""
    try:
        return action()
    except WorldInputError as e:
        raise ToolError(str(e)) from e


def create_mcp_server(day_dir: str | Path, clock: Callable[[], str] | None = None) -> MCPServer:
    """An MCPServer whose tools act on one day folder."""
    store = WorldStore(day_dir, clock)
    root = logging.getLogger()
    saved = root.level, list(root.handlers)
    server = MCPServer(
        name="wildawm-world",
        instructions=(
            f"Chat, direct messages and email of {store.persona_id}. Read before you write; "
            "channel names have no leading '#'."
        ),
        log_level="WARNING",
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

    return server


def serve_mcp(day_dir: str | Path, host: str = "127.0.0.1", port: int = 0) -> BackgroundServer:
    """Start the MCP server over streamable HTTP; the endpoint is ``<server.url>/mcp``."""
    app = create_mcp_server(day_dir).streamable_http_app(streamable_http_path="/mcp", host=host)
    server = BackgroundServer(app, host, port, name="world-mcp")
    server.start()
    return server
