"""web>cli>mcp: a meeting request by mail -> an agenda note -> confirm by email."""

from __future__ import annotations

from envpipeline.models.world import Operation
from envpipeline.worlds.schema import FILES_APP, day_date
from envpipeline.worlds.task_builder import Context, TaskBuilder, eq, has, to
from envpipeline.worlds.templates._life import dress
from envpipeline.worlds.templates.base import Template, at
from envpipeline.worlds.templates.registry import register_template

TOPICS = [
    "the Q2 budget",
    "the site survey",
    "the new client brief",
    "the venue walkthrough",
    "the draft contract",
    "the spring schedule",
    "the supplier shortlist",
    "the launch plan",
]
PLACES = ["Room 4B", "Harbour Cafe", "the studio", "Main Library, floor 2", "Central Station kiosk"]


def invite_to_agenda(ctx: Context) -> TaskBuilder:
    """web>cli>mcp: calendar-from-mail, kept in an agenda note."""
    c = ctx.rng.choice(ctx.contacts("colleague", "client"))
    topic, place = ctx.rng.choice(TOPICS), ctx.rng.choice(PLACES)
    date = day_date(ctx.day + ctx.rng.randint(2, 6)).isoformat()
    time = ctx.rng.choice(["09:30", "11:00", "14:30", "16:15"])
    b = TaskBuilder("invite_to_agenda", facts={"date": date, "time": time, "place": place, "topic": topic})
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
                "subject": f"Meeting request: {topic}",
                "sent_at": at(ctx, "15:30"),
                "body": f"Hi {ctx.persona.name.split()[0]}, can we meet on {date} at {time} at {place} to discuss "
                f"{topic}? Best, {c.name}",
            },
        )
    ]
    b.instruction = dress(
        ctx,
        (
            f"{c.name} emailed a meeting request about {topic}. Read it in the webmail, add a line "
            "'- DATE TIME TOPIC @ PLACE' to notes/agenda.md with the shell, and confirm the date and "
            f"time to {c.email} by email through the mail tool."
        ),
    )
    b.sub(
        "web",
        "Read the meeting request in the webmail.",
        f"Open the inbox message 'Meeting request: {topic}'.",
    )
    b.step(
        "web.read_mail",
        subject=f"Meeting request: {topic}",
        pattern=r"meet on (\S+) at (\S+) at (.+?) to discuss",
        vars=["date", "time", "place"],
        distractors={"date": [ctx.date], "time": ["10:00"]},
    )
    b.sub(
        "cli", "Append the meeting to notes/agenda.md.", "echo '- DATE TIME TOPIC @ PLACE' >> notes/agenda.md"
    )
    b.step("cli.append_file", path="notes/agenda.md", content=f"- {{date}} {{time}} {topic} @ {{place}}\n")
    b.crit(
        "file_contains", f"notes/agenda.md has {date} {time}", path="notes/agenda.md", text=f"{date} {time}"
    )
    b.crit("file_contains", f"notes/agenda.md names the place {place}", path="notes/agenda.md", text=place)
    b.expect(FILES_APP, f"{date} {time}", place, path="notes/agenda.md")
    b.sub(
        "mcp",
        f"Confirm {date} at {time} to {c.email} by email.",
        f"mail_send to '{c.email}' with a body like 'Confirmed: {date} at {time}'.",
    )
    b.step(
        "mcp.mail_send",
        to=c.email,
        subject=f"Re: Meeting request: {topic}",
        body="Confirmed: {date} at {time}.",
    )
    b.crit(
        "row_added",
        f"a sent email to {c.email} confirms {date} at {time}",
        2.0,
        app="mail",
        table="messages",
        where={"folder": eq("sent"), "recipients": to(c.email), "body": has(f"{date} at {time}")},
    )
    b.expect("mail", "{folder=sent}", c.email, f"{date} at {time}", table="messages")
    return b


def applicable(ctx: Context) -> bool:
    """Always: the template seeds its own meeting request."""
    return True


register_template(Template("invite_to_agenda", applicable, invite_to_agenda))
