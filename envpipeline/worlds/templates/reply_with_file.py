"""mcp>cli>web>cli: a mail asks for a file -> read it -> reply from the webmail -> log it."""

from __future__ import annotations

from envpipeline.models.world import Operation
from envpipeline.worlds.schema import FILES_APP
from envpipeline.worlds.task_builder import Context, TaskBuilder, eq, has, to
from envpipeline.worlds.templates._life import dress
from envpipeline.worlds.templates.base import Template, at
from envpipeline.worlds.templates.registry import register_template


def _shareable(ctx: Context) -> list[tuple[str, str]]:
    out = []
    for path in ctx.reader.list_files():
        if path == "todo.txt" or not path.endswith((".md", ".txt")):
            continue
        lines = [
            ln.strip()
            for ln in ctx.reader.read_file(path).splitlines()
            if ln.strip() and not ln.startswith("#") and 12 <= len(ln.strip()) <= 120
        ]
        if lines:
            out.append((path, lines[0]))
    return out


def reply_with_file(ctx: Context) -> TaskBuilder:
    """mcp>cli>web>cli: answer a mail with a file's content."""
    path, key = ctx.rng.choice(_shareable(ctx))
    c = ctx.rng.choice(ctx.contacts("client", "colleague"))
    title = path.rsplit("/", 1)[-1]
    content = ctx.reader.read_file(path).strip()
    b = TaskBuilder("reply_with_file", facts={"path": path, "key": key})
    b.setup = [
        Operation(
            app="mail",
            table="messages",
            op="insert",
            values={
                "folder": "inbox",
                "sender": c.email,
                "recipients": ctx.persona.email,
                "is_read": 0,
                "subject": f"Request: {title}",
                "sent_at": at(ctx, "15:40"),
                "body": f"Hi, could you send me the contents of {path}? Thanks, {c.name}",
            },
        )
    ]
    b.instruction = dress(
        ctx,
        (
            f"{c.name} asked by email for one of your files. Read the request with the mail tool, get "
            f"the file's content with the shell, send it to {c.email} from the webmail with the subject "
            f"'Re: Request: {title}', and log '- sent PATH to {c.email}' in notes/sent-log.md."
        ),
    )
    b.sub("mcp", "Read the request email.", f"mail_list then mail_read the message 'Request: {title}'.")
    b.step(
        "mcp.read_mail",
        subject=f"Request: {title}",
        pattern=r"contents of (\S+)\?",
        vars=["path"],
        distractors={"path": ["notes/ideas.md" if path != "notes/ideas.md" else "todo.txt"]},
    )
    b.sub("cli", "Print the requested file.", f"cat {path}")
    b.step("cli.read_file", path="{path}", pattern=r"(?s)(.+)", vars=["content"])
    b.sub(
        "web",
        f"Reply to {c.email} with the file content from the webmail.",
        "Open Compose, paste the content into the body and send.",
    )
    b.step("web.send_mail", to=c.email, subject=f"Re: Request: {title}", body="{content}")
    b.crit(
        "row_added",
        f"a sent email to {c.email} has subject 'Re: Request: {title}'",
        app="mail",
        table="messages",
        where={"folder": eq("sent"), "recipients": to(c.email), "subject": has(title)},
    )
    b.crit(
        "row_added",
        f"the reply carries the content of {path}",
        2.0,
        app="mail",
        table="messages",
        # the whole file, not only its first line: a copy with its last line changed is no copy
        where={"folder": eq("sent"), "recipients": to(c.email), "body": has(content)},
    )
    b.expect("mail", "{folder=sent}", c.email, title, key, table="messages")
    b.sub(
        "cli",
        "Log the sent file in notes/sent-log.md.",
        f"echo '- sent {path} to {c.email}' >> notes/sent-log.md",
    )
    b.step("cli.append_file", path="notes/sent-log.md", content=f"- sent {{path}} to {c.email}\n")
    b.crit("file_contains", f"notes/sent-log.md logs {path}", path="notes/sent-log.md", text=f"sent {path}")
    b.expect(FILES_APP, path, path="notes/sent-log.md")
    return b


def applicable(ctx: Context) -> bool:
    """home/ holds a note or text file with a shareable line."""
    return bool(_shareable(ctx))


register_template(Template("reply_with_file", applicable, reply_with_file))
