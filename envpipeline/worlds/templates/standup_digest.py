"""mcp>cli>web: a teammate's stand-up in the team chat -> a digest file -> email the digest."""

from __future__ import annotations

from envpipeline.worlds.schema import FILES_APP
from envpipeline.worlds.skills.team_standup_chat import UPDATES
from envpipeline.worlds.task_builder import Context, TaskBuilder, eq, has, to
from envpipeline.worlds.templates._life import dress
from envpipeline.worlds.templates.base import Template
from envpipeline.worlds.templates.registry import register_template


def _standups(ctx: Context) -> list[dict]:
    handles = {c.handle for c in ctx.persona.contacts}
    rows = ctx.reader.query(
        "chat",
        "SELECT m.* FROM messages m JOIN channels c ON c.id = m.channel_id "
        "WHERE c.name = 'team' ORDER BY m.id",
    )
    return [r for r in rows if r["author"] in handles and r["body"].startswith("Stand-up: ")]


def standup_distractors(ctx: Context, update: str) -> list[str]:
    """Wrong updates an agent may take: other stand-ups of the channel, never the true `update`."""
    rows = ctx.reader.query(
        "chat",
        "SELECT m.* FROM messages m JOIN channels c ON c.id = m.channel_id "
        "WHERE c.name = 'team' ORDER BY m.id",
    )
    seen = [
        str(r["body"]).removeprefix("Stand-up: ") for r in rows if str(r["body"]).startswith("Stand-up: ")
    ]
    fallback = [f"{u}." for u in UPDATES]
    options = [u for u in dict.fromkeys([*reversed(seen), *fallback]) if u.strip() != update.strip()]
    return options[:2]


def standup_digest(ctx: Context) -> TaskBuilder:
    """mcp>cli>web: a stand-up digest."""
    last = _standups(ctx)[-1]
    update = last["body"].removeprefix("Stand-up: ")
    author = last["author"]
    lead = ctx.rng.choice([c for c in ctx.persona.contacts if c.handle != author] or ctx.persona.contacts)
    path = f"notes/standup-{ctx.date}.md"
    b = TaskBuilder("standup_digest", facts={"update": update, "author": author})
    b.instruction = dress(
        ctx,
        (
            f"Write a stand-up digest: read {author}'s latest stand-up in the 'team' chat, save it as "
            f"'- {author}: UPDATE' in {path} with the shell, and email it to {lead.name} <{lead.email}> "
            f"from the webmail with the subject 'Stand-up digest {ctx.date}'."
        ),
    )
    b.sub(
        "mcp", f"Read {author}'s latest stand-up in the team channel.", "chat_read_channel(channel='team')."
    )
    b.step(
        "mcp.read_chat",
        channel="team",
        author=author,
        pattern=r"Stand-up: (.+)",
        vars=["update"],
        distractors={"update": standup_distractors(ctx, update)},
    )
    b.sub("cli", f"Write the digest file {path}.", f"printf '# Stand-up\\n- {author}: ...\\n' > {path}")
    b.step("cli.write_file", path=path, content=f"# Stand-up {ctx.date}\n\n- {author}: {{update}}\n")
    b.crit("file_contains", f"{path} holds {author}'s update", path=path, text=f"{author}: {update}")
    b.expect(FILES_APP, author, update, path=path)
    b.sub(
        "web",
        f"Email the digest to {lead.email} from the webmail.",
        f"Compose to {lead.email}, subject 'Stand-up digest {ctx.date}', body with the update.",
    )
    b.step(
        "web.send_mail", to=lead.email, subject=f"Stand-up digest {ctx.date}", body=f"{author}: {{update}}"
    )
    b.crit(
        "row_added",
        f"a sent email to {lead.email} is titled 'Stand-up digest {ctx.date}'",
        app="mail",
        table="messages",
        where={
            "folder": eq("sent"),
            "recipients": to(lead.email),
            "subject": has(f"Stand-up digest {ctx.date}"),
        },
    )
    b.crit(
        "row_added",
        "the digest email carries the update",
        2.0,
        app="mail",
        table="messages",
        where={"folder": eq("sent"), "recipients": to(lead.email), "body": has(update)},
    )
    b.expect("mail", "{folder=sent}", lead.email, "Stand-up digest", update, table="messages")
    return b


def applicable(ctx: Context) -> bool:
    """A contact posted a stand-up in the team channel."""
    return bool(_standups(ctx))


register_template(Template("standup_digest", applicable, standup_digest))
