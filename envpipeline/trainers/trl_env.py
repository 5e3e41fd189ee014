"""TRL ``GRPOTrainer(environment_factory=...)`` classes, one per task family, over `Episode`s.

How TRL 1.16 uses them (``trl/trainer/grpo_trainer.py``, ``GRPOTrainer.__init__`` and
``_generate_and_score_completions``): it calls the factory with no arguments, lists the class's
functions with ``inspect.getmembers(type(env), inspect.isfunction)``, and every public one except
``reset`` and ``get_reward`` becomes a tool (its schema from the docstring and type hints,
``transformers.utils.get_json_schema``); a tool call runs ``method(**arguments)``. Before each
rollout it calls ``env.reset(**row)`` with every dataset column (an observation it returns is
appended to the last prompt message), and when the class defines ``get_reward`` it adds a reward
column that calls ``env.get_reward()`` with no arguments on the rollout's environment.

So the ONLY public methods here are the agent's tools (the `Episode`'s tools, ``submit_answer``
included), ``reset`` and ``get_reward``; configuration is class state set by `bind_environment`.
`environment_factories` gives the ``{family: class}`` dict for TRL's multi-environment mode (the
row's ``environment`` column names its family).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from envpipeline.errors import ConfigError
from envpipeline.models.task import TaskRecord
from envpipeline.trainers.binding import bind_environment
from envpipeline.trainers.episode import Episode, RewardMode
from envpipeline.trainers.from_row import episode_from_row


class EpisodeEnv:
    """Base of the TRL environment classes: the live `Episode` of the row given to ``reset``."""

    family: ClassVar[str] = ""
    tasks: ClassVar[dict[str, TaskRecord]] = {}
    home: ClassVar[Path | None] = None
    reward_mode: ClassVar[RewardMode] = "binary"
    options: ClassVar[dict[str, Any]] = {}

    def __init__(self) -> None:
        self._episode: Episode | None = None

    @property
    def episode(self) -> Episode:
        """The live episode (after ``reset``); reward functions read it through TRL's ``environments``."""
        if self._episode is None:
            raise ConfigError("call reset(**row) before using the environment")
        return self._episode

    def reset(self, **row: Any) -> str | None:
        """Rebuild the row's task on a fresh copy of its initial state; the instruction if the row has no prompt."""
        if self._episode is not None:
            self._episode.close()
            self._episode = None
        episode = episode_from_row(row, self.tasks, self.home, **self.options)
        if self.family and episode.family != self.family:
            episode.close()
            raise ConfigError(
                f"{type(self).__name__} runs {self.family} tasks; task {episode.task_id} is {episode.family}"
                " (use environment_factories() with an 'environment' column naming the family)"
            )
        self._episode = episode
        return None if row.get("prompt") else episode.instruction

    def get_reward(self) -> float:
        """The episode's reward from its live state and submitted answer (binary, or checklist credit)."""
        return self.episode.reward(self.reward_mode)

    def submit_answer(self, answer: str) -> str:
        """Submit your final answer when the task is done (the last submission counts).

        Args:
            answer: The final answer for the user.

        Returns:
            JSON observation confirming the submission.
        """
        return self._call("submit_answer", answer=answer)

    def _call(self, name: str, /, **arguments: Any) -> str:
        return self.episode.call(name, arguments)


class ComposedTaskEnv(EpisodeEnv):
    """A composed task: the four meta-tools and submit_answer."""

    family: ClassVar[str] = "compose"

    def list_services(self) -> str:
        """List the services available in this environment.

        Returns:
            JSON observation with the services' names, titles, domains and tool counts.
        """
        return self._call("list_services")

    def list_tools(self, service: str) -> str:
        """List the tools of one service with a one-line description each.

        Args:
            service: The service name, e.g. "calendar".

        Returns:
            JSON observation with the namespaced tool names and descriptions.
        """
        return self._call("list_tools", service=service)

    def describe_tool(self, tool: str) -> str:
        """Show the argument schema of one tool.

        Args:
            tool: The namespaced tool name, e.g. "calendar.update_event".

        Returns:
            JSON observation with the tool's description and JSON-schema parameters.
        """
        return self._call("describe_tool", tool=tool)

    def call_tool(self, tool: str, arguments: dict) -> str:
        """Call one tool with arguments matching its schema.

        Args:
            tool: The namespaced tool name, e.g. "calendar.update_event".
            arguments: The tool's arguments as a JSON object.

        Returns:
            JSON observation: {"success": true, "data": ...} or {"success": false, "error": {"code", "message"}}.
        """
        return self._call("call_tool", tool=tool, arguments=arguments)


class WorldTaskEnv(EpisodeEnv):
    """A world task: the web, CLI and MCP interfaces of the persona's computer, and submit_answer."""

    family: ClassVar[str] = "world"

    def web__request(self, method: str, path: str, form: dict | None = None) -> str:
        """Send one HTTP request to the web storefront and webmail (redirects are not followed).

        Args:
            method: "GET" or "POST".
            path: The page, e.g. "/" or "/mail?folder=inbox" or "/cart/add".
            form: Form fields of a POST, e.g. {"sku": "SKU-1", "quantity": "1"}.

        Returns:
            "<status> <redirect location> <page text>".
        """
        arguments: dict[str, Any] = {"method": method, "path": path}
        if form:
            arguments["form"] = form
        return self._call("web__request", **arguments)

    def cli__exec(self, command: str) -> str:
        """Run one bash command in the home folder.

        Args:
            command: The bash command.

        Returns:
            "exit=<code>" then the command's output.
        """
        return self._call("cli__exec", command=command)

    def mcp__chat_list_channels(self) -> str:
        """List the chat channels with their topic and number of messages.

        Returns:
            JSON with the channels.
        """
        return self._call("mcp__chat_list_channels")

    def mcp__chat_read_channel(self, channel: str, limit: int = 20) -> str:
        """Read the last `limit` messages of a chat channel (oldest first).

        Args:
            channel: The channel name, without '#'.
            limit: How many messages to read.

        Returns:
            JSON with the messages.
        """
        return self._call("mcp__chat_read_channel", channel=channel, limit=limit)

    def mcp__chat_post(self, channel: str, body: str) -> str:
        """Post a message to a chat channel as the persona.

        Args:
            channel: The channel name, without '#'.
            body: The message text.

        Returns:
            JSON with the posted message.
        """
        return self._call("mcp__chat_post", channel=channel, body=body)

    def mcp__dm_list_threads(self) -> str:
        """List direct-message conversations: peer, number of messages, last activity.

        Returns:
            JSON with the threads.
        """
        return self._call("mcp__dm_list_threads")

    def mcp__dm_read(self, peer: str) -> str:
        """Read the whole direct-message conversation with `peer` (oldest first).

        Args:
            peer: The other person's handle.

        Returns:
            JSON with the messages.
        """
        return self._call("mcp__dm_read", peer=peer)

    def mcp__dm_send(self, peer: str, body: str) -> str:
        """Send a direct message to `peer` (starts a conversation if there is none).

        Args:
            peer: The other person's handle.
            body: The message text.

        Returns:
            JSON with the sent message.
        """
        return self._call("mcp__dm_send", peer=peer, body=body)

    def mcp__flights_list(self) -> str:
        """List every flight booking: confirmation, route, departure and status.

        Returns:
            JSON with the bookings.
        """
        return self._call("mcp__flights_list")

    def mcp__flights_get(self, confirmation: str) -> str:
        """Read one flight booking.

        Args:
            confirmation: The booking's confirmation code.

        Returns:
            JSON with the booking.
        """
        return self._call("mcp__flights_get", confirmation=confirmation)

    def mcp__flights_change(self, confirmation: str, depart_at: str) -> str:
        """Move a confirmed booking to another departure.

        Args:
            confirmation: The booking's confirmation code.
            depart_at: The new departure (YYYY-MM-DDTHH:MM:SS).

        Returns:
            JSON with the changed booking.
        """
        return self._call("mcp__flights_change", confirmation=confirmation, depart_at=depart_at)

    def mcp__flights_cancel(self, confirmation: str) -> str:
        """Cancel a confirmed booking.

        Args:
            confirmation: The booking's confirmation code.

        Returns:
            JSON with the cancelled booking.
        """
        return self._call("mcp__flights_cancel", confirmation=confirmation)

    def mcp__flights_book(self, origin: str, destination: str, depart_at: str) -> str:
        """Book a new flight for the persona.

        Args:
            origin: The departure city.
            destination: The arrival city.
            depart_at: The departure (YYYY-MM-DDTHH:MM:SS).

        Returns:
            JSON with the new booking.
        """
        return self._call("mcp__flights_book", origin=origin, destination=destination, depart_at=depart_at)

    def mcp__accounts_list(self) -> str:
        """List the persona's logins (site and username).

        Returns:
            JSON with the logins.
        """
        return self._call("mcp__accounts_list")

    def mcp__accounts_set_password(self, username: str, new_password: str) -> str:
        """Set a login's password.

        Args:
            username: The login's username.
            new_password: The new password.

        Returns:
            JSON with the result.
        """
        return self._call("mcp__accounts_set_password", username=username, new_password=new_password)

    def mcp__mail_list(self, folder: str = "inbox") -> str:
        """List the email messages of a folder (inbox, sent or archive), newest first, without bodies.

        Args:
            folder: inbox, sent or archive.

        Returns:
            JSON with the messages.
        """
        return self._call("mcp__mail_list", folder=folder)

    def mcp__mail_read(self, message_id: int) -> str:
        """Read one email message with its body; marks it read.

        Args:
            message_id: The message id from mail_list.

        Returns:
            JSON with the message.
        """
        return self._call("mcp__mail_read", message_id=message_id)

    def mcp__mail_send(self, to: str, subject: str, body: str) -> str:
        """Send an email from the persona's address.

        Args:
            to: One address, or several separated by commas.
            subject: The subject line.
            body: The message text.

        Returns:
            JSON with the sent message.
        """
        return self._call("mcp__mail_send", to=to, subject=subject, body=body)


class TerminalTaskEnv(EpisodeEnv):
    """A terminal task: one shell tool in the task's container, and submit_answer."""

    family: ClassVar[str] = "terminal"

    def exec(self, command: str) -> str:
        """Run one bash command in the task's Linux container (working directory /app).

        Args:
            command: The bash command.

        Returns:
            "exit=<code>" then the command's output.
        """
        return self._call("exec", command=command)

    def submit_answer(self, answer: str) -> str:
        """Say you are done (the task's tests run when the episode is scored).

        Args:
            answer: A short summary of what you did.

        Returns:
            JSON observation confirming the submission.
        """
        return self._call("submit_answer", answer=answer)


ENV_CLASSES: dict[str, type[EpisodeEnv]] = {
    "compose": ComposedTaskEnv,
    "world": WorldTaskEnv,
    "terminal": TerminalTaskEnv,
}


def environment_factories(
    tasks: list[TaskRecord] | dict[str, TaskRecord] | None = None,
    home: str | Path | None = None,
    reward_mode: RewardMode = "binary",
    **options: Any,
) -> dict[str, type[EpisodeEnv]]:
    """``{family: bound class}`` for TRL's multi-environment mode (rows name theirs in ``environment``)."""
    return {
        family: bind_environment(cls, tasks, home, reward_mode, **options)
        for family, cls in ENV_CLASSES.items()
    }
