"""Templates over calendar events of earlier days (web calendar, MCP mail/DM/chat, shell notes).

meeting_reschedule    mcp>web>mcp>cli  the attendee asks by mail to move a meeting planned earlier
meeting_cancel_notice web>mcp>cli      cancel a meeting planned earlier, tell the attendee, note it
plans_reminder        web>mcp>cli      plans made by DM on an earlier day: remind the friend, a todo
meeting_prep_note     web>cli>mcp      a prep file for a meeting planned earlier, announced in chat
"""

from __future__ import annotations

import json

from envpipeline.models.world import Operation
from envpipeline.worlds.schema import FILES_APP
from envpipeline.worlds.task_builder import Context, TaskBuilder, eq, has, to
from envpipeline.worlds.templates._life import (
    history_rows,
    minutes_between,
    phrase,
    prefer_history,
    said,
    shift,
    upcoming_after,
)
from envpipeline.worlds.templates.base import Template, at
from envpipeline.worlds.templates.registry import register_template

AGENDA = "notes/agenda.md"


def _upcoming(ctx: Context, location: str | None = None) -> list[dict]:
    """Upcoming, not cancelled events with another attendee who is a contact of the persona."""
    rows = history_rows(
        ctx,
        "calendar",
        "events",
        "start > ? AND title NOT LIKE 'Cancelled:%' AND title NOT LIKE 'Flight %'",
        (upcoming_after(ctx),),
    )
    emails = {c.email: c for c in ctx.persona.contacts}
    out = []
    for row in rows:
        others = [emails[a] for a in json.loads(row["attendees_json"] or "[]") if a in emails]
        if others and (location is None or (row["location"] == location) == (location == "Video call")):
            out.append({**row, "_with": others[0]})
    return out


def _meetings(ctx: Context) -> list[dict]:
    return _upcoming(ctx, "Video call")


def _plans(ctx: Context) -> list[dict]:
    return [r for r in _upcoming(ctx) if r["location"] != "Video call"]


def _others(ctx: Context, event: dict) -> list[str]:
    rows = ctx.reader.query("calendar", "SELECT start FROM events WHERE id != ?", [event["id"]])
    return [r["start"] for r in rows] or [ctx.date + "T09:00:00"]


def _find(b: TaskBuilder, ctx: Context, event: dict) -> None:
    b.step(
        "web.find_event",
        match={"title": event["title"]},
        vars={
            "event_id": "id",
            "location": "location",
            "start_date": "start_date",
            "start_time": "start_time",
        },
        distractors={
            "start_date": [o[:10] for o in _others(ctx, event) if o[:10] != event["start"][:10]]
            or ["2026-01-01"],
            "start_time": [o[11:16] for o in _others(ctx, event) if o[11:16] != event["start"][11:16]]
            or ["06:15"],
        },
    )


def meeting_reschedule(ctx: Context) -> TaskBuilder:
    """The attendee of a meeting planned on an earlier day asks by mail to move it."""
    ev = prefer_history(ctx, _meetings(ctx))
    assert ev is not None
    c, title = ev["_with"], ev["title"]
    new = shift(ev["start"], days=ctx.rng.randint(1, 2), minutes=ctx.rng.choice([-60, 60, 120]))
    end = shift(new, minutes=minutes_between(ev["start"], ev["end"]))
    subject = f"Moving {title}"
    b = TaskBuilder("meeting_reschedule", facts={"event": title, "new_start": new})
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
                "subject": subject,
                "sent_at": at(ctx, "12:10"),
                "body": f"Hi, something came up. Could we move '{title}' to {said(new)}? Thanks, {c.name}",
            },
        )
    ]
    line = f"- {title}: moved to {{new_date}} at {{new_time}}"
    reply = "Done: '{title}' now starts {new_date} at {new_time}."
    b.instruction = phrase(
        ctx,
        [
            "{name} emailed asking to move '{title}'. Read the request with the mail tool, move the "
            "event in the web calendar to the time they ask for, confirm to {email} through the mail "
            "tool, and append '- {title}: moved to <new time>' to {path} with the shell.",
            "There's a mail from {name} about rescheduling '{title}' (set up on day {bday}). Use the "
            "mail tool to read it, shift the web calendar event accordingly, reply to {email} through "
            "the mail tool, and log '- {title}: moved to <new time>' in {path} from the terminal.",
            "Handle {name}'s request to move '{title}': read it through the mail tool, move the meeting "
            "in the web calendar, email {email} a confirmation through the mail tool, then add '- "
            "{title}: moved to <new time>' to {path} in the shell.",
        ],
        name=c.name,
        title=title,
        email=c.email,
        bday=ev["_day"],
        path=AGENDA,
    )
    b.sub("mcp", f"Read {c.name}'s request.", f"mail_list, then mail_read the message '{subject}'.")
    b.step(
        "mcp.read_mail",
        subject=subject,
        pattern=r"move '.*' to (\S+) at (\S+)\?",
        vars=["new_date", "new_time"],
        distractors={"new_date": [ev["start"][:10]], "new_time": [ev["start"][11:16]]},
    )
    b.sub("web", f"Move '{title}' to the new time.", f"Open /calendar, event '{title}', move to {new}.")
    _find(b, ctx, ev)
    b.step("web.move_event", event="{event_id}", start="{new_date}T{new_time}")
    where = {"title": eq(title)}
    b.crit(
        "row_changed",
        f"'{title}' starts {new}",
        2.0,
        app="calendar",
        table="events",
        where=where,
        field="start",
        to=new,
    )
    b.crit(
        "row_changed",
        f"'{title}' ends {end}",
        app="calendar",
        table="events",
        where=where,
        field="end",
        to=end,
    )
    b.expect("calendar", new, table="events")
    b.sub("mcp", f"Confirm to {c.email}.", f"mail_send to {c.email}: 'Done: {title} now starts {said(new)}.'")
    b.step("mcp.mail_send", to=c.email, subject=f"Re: {subject}", body=reply.replace("{title}", title))
    b.crit(
        "row_added",
        f"a sent email to {c.email} confirms {new}",
        app="mail",
        table="messages",
        where={"folder": eq("sent"), "recipients": to(c.email), "body": has(said(new))},
    )
    b.expect("mail", "{folder=sent}", c.email, said(new), table="messages")
    b.sub("cli", f"Log the move in {AGENDA}.", f"echo '- {title}: moved to {said(new)}' >> {AGENDA}")
    b.step("cli.append_file", path=AGENDA, content=line.replace("{title}", title) + "\n")
    b.crit("file_contains", f"{AGENDA} logs the move", path=AGENDA, text=f"- {title}: moved to {said(new)}")
    b.expect(FILES_APP, title, said(new), path=AGENDA)
    return b


def meeting_cancel_notice(ctx: Context) -> TaskBuilder:
    """Cancel a meeting planned on an earlier day, tell the attendee by mail, note it."""
    ev = prefer_history(ctx, _meetings(ctx))
    assert ev is not None
    c, title = ev["_with"], ev["title"]
    line = f"- cancelled: {title} ({said(ev['start'])})"
    body = f"Sorry, I have to cancel '{title}' on {said(ev['start'])}. Let's find another slot."
    b = TaskBuilder("meeting_cancel_notice", facts={"event": title, "start": ev["start"]})
    b.instruction = phrase(
        ctx,
        [
            "I can't make '{title}'. Cancel it in the web calendar, email {email} through the mail tool "
            "'{body}', and add '{line}' to {path} from the shell.",
            "Drop the meeting '{title}' I set up on day {bday}: cancel the event on the web calendar, "
            "send {name} ({email}) the email '{body}' through the mail tool, and note '{line}' in {path} "
            "with the shell.",
            "'{title}' is off. Please cancel the web calendar event, let {email} know by email through "
            "the mail tool with '{body}', and append '{line}' to {path} in the terminal.",
        ],
        title=title,
        email=c.email,
        name=c.name,
        body=body,
        line=line,
        path=AGENDA,
        bday=ev["_day"],
    )
    b.sub("web", f"Cancel '{title}'.", f"Open /calendar, event '{title}', Cancel event.")
    _find(b, ctx, ev)
    b.step("web.cancel_event", event="{event_id}")
    b.crit(
        "row_changed",
        f"'{title}' is cancelled",
        2.0,
        app="calendar",
        table="events",
        where={"title": eq(title)},
        field="title",
        to="Cancelled: " + title,
    )
    b.expect("calendar", "Cancelled:", table="events")
    b.sub("mcp", f"Tell {c.email}.", f"mail_send to {c.email} with the cancellation.")
    b.step(
        "mcp.mail_send",
        to=c.email,
        subject=f"Cancelled: {title}",
        body=body.replace(said(ev["start"]), "{start_date} at {start_time}"),
    )
    b.crit(
        "row_added",
        f"a sent email to {c.email} cancels '{title}'",
        app="mail",
        table="messages",
        where={
            "folder": eq("sent"),
            "recipients": to(c.email),
            "body": has(f"cancel '{title}' on {said(ev['start'])}"),
        },
    )
    b.expect("mail", "{folder=sent}", c.email, said(ev["start"]), table="messages")
    b.sub("cli", f"Note it in {AGENDA}.", f"echo '{line}' >> {AGENDA}")
    b.step(
        "cli.append_file", path=AGENDA, content=f"- cancelled: {title} ({{start_date}} at {{start_time}})\n"
    )
    b.crit("file_contains", f"{AGENDA} notes the cancellation", path=AGENDA, text=line)
    b.expect(FILES_APP, title, said(ev["start"]), path=AGENDA)
    return b


def plans_reminder(ctx: Context) -> TaskBuilder:
    """Plans made by DM on an earlier day: read the event, remind the friend by DM, add a todo line."""
    ev = prefer_history(ctx, _plans(ctx))
    assert ev is not None
    c, title = ev["_with"], ev["title"]
    text = f"Reminder: {title}, {ev['location']}, {said(ev['start'])}"
    line = f"- [ ] {title} at {said(ev['start'])}"
    b = TaskBuilder("plans_reminder", facts={"event": title, "start": ev["start"], "peer": c.handle})
    b.instruction = phrase(
        ctx,
        [
            "Look up '{title}' in the web calendar and send {handle} a direct message 'Reminder: "
            "{title}, <place>, <start>' with the place and start time from the event; then append "
            "'- [ ] {title} at <start>' to todo.txt with the shell.",
            "I made plans with {name} on day {bday}. From the web calendar event '{title}', DM {handle} "
            "'Reminder: {title}, <place>, <start>', and put '- [ ] {title} at <start>' into todo.txt "
            "in the terminal.",
            "Don't let '{title}' slip: read where and when it is in the web calendar, remind {handle} "
            "by direct message ('Reminder: {title}, <place>, <start>'), and add '- [ ] {title} at "
            "<start>' to todo.txt using the shell.",
        ],
        title=title,
        handle=c.handle,
        name=c.name,
        bday=ev["_day"],
    )
    b.sub("web", f"Read '{title}' in the calendar.", f"Open /calendar and the event '{title}'.")
    _find(b, ctx, ev)
    b.sub("mcp", f"Remind {c.handle} by DM.", f"dm_send to {c.handle}: '{text}'")
    b.step(
        "mcp.dm_send",
        peer=c.handle,
        body=f"Reminder: {title}, {{location}}, {{start_date}} at {{start_time}}",
    )
    b.crit(
        "row_added",
        f"a DM to {c.handle} names {ev['location']} and {ev['start']}",
        2.0,
        app="dm",
        table="messages",
        where={"peer": eq(c.handle), "direction": eq("out"), "body": has(text)},
    )
    b.expect("dm", c.handle, said(ev["start"]), table="messages")
    b.sub("cli", "Add the todo line.", f"echo '{line}' >> todo.txt")
    b.step("cli.append_file", path="todo.txt", content=f"- [ ] {title} at {{start_date}} at {{start_time}}\n")
    b.crit("file_contains", f"todo.txt lists '{title}' at {ev['start']}", path="todo.txt", text=line)
    b.expect(FILES_APP, title, said(ev["start"]), path="todo.txt")
    return b


def meeting_prep_note(ctx: Context) -> TaskBuilder:
    """A prep file for a meeting planned on an earlier day, announced in the team chat."""
    ev = prefer_history(ctx, _meetings(ctx))
    assert ev is not None
    title, c = ev["title"], ev["_with"]
    path = f"notes/prep-{ev['start'][:10]}.md"
    head = f"# {title}\nWhen: {said(ev['start'])}\nWith: {c.name}\n"
    post = f"Prep notes for '{title}' ({said(ev['start'])}) are in {path}."
    b = TaskBuilder("meeting_prep_note", facts={"event": title, "start": ev["start"]})
    b.instruction = phrase(
        ctx,
        [
            "Prepare for '{title}': take its start time from the web calendar, write {path} in the "
            "shell starting with '# {title}', then 'When: <start>' and 'With: {name}', and post "
            "'Prep notes for '{title}' (<start>) are in {path}.' in the team channel.",
            "Set up prep notes for the meeting '{title}' planned on day {bday}. Read it in the web "
            "calendar, create {path} from the terminal with the lines '# {title}', 'When: <start>', "
            "'With: {name}', and post in the team channel that the notes are in {path} (with the start).",
        ],
        title=title,
        path=path,
        name=c.name,
        bday=ev["_day"],
    )
    b.sub("web", f"Read '{title}' in the calendar.", f"Open /calendar and the event '{title}'.")
    _find(b, ctx, ev)
    b.sub(
        "cli",
        f"Write {path}.",
        f"printf '# {title}\\nWhen: {said(ev['start'])}\\nWith: {c.name}\\n' > {path}",
    )
    b.step(
        "cli.write_file",
        path=path,
        content=f"# {title}\nWhen: {{start_date}} at {{start_time}}\nWith: {c.name}\n",
    )
    b.crit("file_contains", f"{path} has the meeting's start", 2.0, path=path, text=head)
    b.expect(FILES_APP, title, said(ev["start"]), path=path)
    b.sub("mcp", "Post in the team channel.", f"chat_post channel 'team': \"{post}\"")
    b.step(
        "mcp.chat_post",
        channel="team",
        body=f"Prep notes for '{title}' ({{start_date}} at {{start_time}}) are in {path}.",
    )
    b.crit(
        "row_added",
        "the team channel hears about the prep notes",
        app="chat",
        table="messages",
        where={"body": has(post)},
    )
    b.expect("chat", path, table="messages")
    return b


def _has_team(ctx: Context) -> bool:
    return bool(_meetings(ctx)) and bool(
        ctx.reader.query("chat", "SELECT id FROM channels WHERE name = 'team'")
    )


register_template(Template("meeting_reschedule", lambda ctx: bool(_meetings(ctx)), meeting_reschedule))
register_template(Template("meeting_cancel_notice", lambda ctx: bool(_meetings(ctx)), meeting_cancel_notice))
register_template(Template("plans_reminder", lambda ctx: bool(_plans(ctx)), plans_reminder))
register_template(Template("meeting_prep_note", _has_team, meeting_prep_note))
