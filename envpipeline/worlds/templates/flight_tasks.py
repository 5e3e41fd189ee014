"""Templates over flight bookings of earlier days (MCP flights tools, web calendar, shell notes).

flight_reschedule       mcp>web>cli      move a trip booked on an earlier day, its calendar event, a note
flight_cancel_trip      mcp>mcp>web>cli  the friend told by DM; cancel the booking and the event; a note
flight_rebook           mcp>web>cli      a booking cancelled on an earlier day is booked again
flight_itinerary_mail   mcp>cli>web      a booking's itinerary file, emailed from the webmail
flight_checkin_reminder mcp>web>cli      a check-in event the day before, and a todo line
"""

from __future__ import annotations

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
from envpipeline.worlds.templates.base import Template
from envpipeline.worlds.templates.registry import register_template


def trip_log(dest: str) -> str:
    """The trip's own log file (a new file: the judges read every line of a file that changed)."""
    return f"trips/{dest.lower().replace(' ', '-')}-log.md"


def _confirmed(ctx: Context) -> list[dict]:
    rows = history_rows(
        ctx, "flights", "bookings", "status = 'confirmed' AND depart_at > ?", (upcoming_after(ctx),)
    )
    titled = []
    for row in rows:
        events = ctx.reader.query(
            "calendar", "SELECT * FROM events WHERE title LIKE ?", [f"%({row['confirmation']})"]
        )
        if events:
            titled.append({**row, "_event": events[0]})
    return titled


def _cancelled(ctx: Context) -> list[dict]:
    return history_rows(ctx, "flights", "bookings", "status = 'cancelled'")


def other_confirmations(ctx: Context, conf: str) -> list[str]:
    """The other bookings' confirmation codes (a wrong-record agent's picks); with no other booking,
    a near miss of `conf` (its last character changed), so the distractor still looks like a code."""
    rows = ctx.reader.query("flights", "SELECT confirmation FROM bookings")
    others = [r["confirmation"] for r in rows if r["confirmation"] != conf]
    if others:
        return others
    last = conf[-1:]
    return [conf[:-1] + (str((int(last) + 1) % 10) if last.isdigit() else "0")]


def _others(ctx: Context, booking: dict) -> list[str]:
    return other_confirmations(ctx, booking["confirmation"])


def _find(b: TaskBuilder, ctx: Context, booking: dict, status: str) -> None:
    rows = ctx.reader.query("flights", "SELECT * FROM bookings WHERE id != ?", [booking["id"]])
    b.step(
        "mcp.find_booking",
        match={"destination": booking["destination"], "status": status},
        confirmation=booking["confirmation"],
        vars={
            "conf": "confirmation",
            "depart": "depart_at",
            "origin": "origin",
            "dest": "destination",
            "depart_date": "depart_at_date",
            "depart_time": "depart_at_time",
        },
        distractors={
            "conf": _others(ctx, booking),
            "depart": [r["depart_at"] for r in rows] or [shift(booking["depart_at"], days=1)],
            "depart_date": [
                r["depart_at"][:10] for r in rows if r["depart_at"][:10] != booking["depart_at"][:10]
            ]
            or ["2026-01-01"],
            "dest": [r["destination"] for r in rows if r["destination"] != booking["destination"]]
            or ["Nowhere"],
        },
    )


def flight_reschedule(ctx: Context) -> TaskBuilder:
    """Move a confirmed trip (booked on an earlier day) by a few days: booking, calendar, travel note."""
    bk = prefer_history(ctx, _confirmed(ctx))
    assert bk is not None
    conf, dest, origin, event = bk["confirmation"], bk["destination"], bk["origin"], bk["_event"]
    travel = trip_log(dest)
    new = shift(bk["depart_at"], days=ctx.rng.randint(1, 3))
    line = f"- {said(new)}: {origin} -> {dest}, confirmation {conf} (moved)"
    b = TaskBuilder("flight_reschedule", facts={"confirmation": conf, "new_depart": new})
    b.instruction = phrase(
        ctx,
        [
            "My '{dest}' trip (booked on day {bday}) has to move: change the flight to depart {new} with "
            "the flights tool, move its calendar event to the same time in the web calendar, and append "
            "'{line}' to {path} from the shell.",
            "The '{dest}' flight I booked earlier needs to leave at {new} instead. Rebook the departure "
            "through the flights tool, shift the matching calendar entry on the web, then log '{line}' "
            "in {path} with the shell.",
            "Push my flight to '{dest}' to {new}. Do it with the flights tool, make the web calendar agree, "
            "and add the line '{line}' to {path} in the terminal.",
            "Things changed for the '{dest}' trip from day {bday}: the departure is now {new}. Update the "
            "booking via the flights tool, the calendar event via the web calendar, and record '{line}' "
            "at the end of {path} using the shell.",
        ],
        dest=dest,
        bday=bk["_day"],
        new=said(new),
        line=line,
        path=travel,
    )
    b.sub("mcp", f"Move the {dest} booking to {new}.", f"flights_list, then flights_change {conf} to {new}.")
    _find(b, ctx, bk, "confirmed")
    b.step("mcp.change_booking", confirmation="{conf}", depart_at=new)
    b.crit(
        "row_changed",
        f"booking {conf} departs {new}",
        2.0,
        app="flights",
        table="bookings",
        where={"confirmation": eq(conf)},
        field="depart_at",
        to=new,
    )
    b.expect("flights", conf, new, table="bookings")
    b.sub(
        "web",
        "Move the flight's calendar event.",
        f"Open /calendar, event '{event['title']}', move to {new}.",
    )
    b.step("web.find_event", match={"title": f"({conf})"}, vars={"event_id": "id"})
    b.step("web.move_event", event="{event_id}", start=new)
    end = shift(new, minutes=minutes_between(event["start"], event["end"]))
    where = {"title": eq(event["title"])}
    b.crit(
        "row_changed",
        f"the event of {conf} starts {new}",
        app="calendar",
        table="events",
        where=where,
        field="start",
        to=new,
    )
    b.crit(
        "row_changed",
        f"the event of {conf} ends {end}",
        app="calendar",
        table="events",
        where=where,
        field="end",
        to=end,
    )
    b.expect("calendar", new, table="events")
    b.sub("cli", f"Log the change in {travel}.", f"echo '{line}' >> {travel}")
    b.step("cli.append_file", path=travel, content=line + "\n")
    # once: the move is logged one time (a solution run twice logs it twice; the flight and the
    # calendar event end up the same either way)
    b.crit("file_contains", f"{travel} logs the move of {conf} once", path=travel, text=line, once=True)
    b.expect(FILES_APP, f"{conf} (moved)", path=travel)
    return b


def flight_cancel_trip(ctx: Context) -> TaskBuilder:
    """Cancel a trip booked on an earlier day: booking, calendar event, travel note and the friend's DM."""
    bk = prefer_history(ctx, _confirmed(ctx))
    assert bk is not None
    conf, dest, event = bk["confirmation"], bk["destination"], bk["_event"]
    travel = trip_log(dest)
    told = ctx.reader.query("dm", "SELECT * FROM messages WHERE body LIKE ? ORDER BY id", [f"%({conf})%"])
    peer = told[-1]["peer"] if told else ctx.rng.choice(ctx.contacts("friend", "family")).handle
    line = f"- cancelled {conf}: {bk['origin']} -> {dest}"
    reply = f"Change of plans: my {dest} trip ({conf}) is cancelled."
    b = TaskBuilder("flight_cancel_trip", facts={"confirmation": conf, "peer": peer})
    b.instruction = phrase(
        ctx,
        [
            "I'm not going to '{dest}' after all. Cancel the booking with the flights tool, cancel its "
            "event in the web calendar, note '{line}' in {path} from the shell, and tell {peer} by "
            "direct message: '{reply}'",
            "Call off the '{dest}' trip from day {bday}: flights tool to cancel, web calendar to cancel the "
            "event, the shell to add '{line}' to {path}, and a direct message to {peer} saying '{reply}'",
            "The '{dest}' flight is off. Please cancel it via the flights tool and its calendar event on "
            "the web, append '{line}' to {path} in the terminal, then send {peer} the direct message "
            "'{reply}'",
        ],
        dest=dest,
        bday=bk["_day"],
        line=line,
        path=travel,
        peer=peer,
        reply=reply,
    )
    b.sub("mcp", f"Cancel the {dest} booking.", f"flights_list, then flights_cancel {conf}.")
    _find(b, ctx, bk, "confirmed")
    b.step("mcp.cancel_booking", confirmation="{conf}")
    b.crit(
        "row_changed",
        f"booking {conf} is cancelled",
        2.0,
        app="flights",
        table="bookings",
        where={"confirmation": eq(conf)},
        field="status",
        to="cancelled",
    )
    b.expect("flights", conf, "{status=cancelled}", table="bookings")
    b.sub(
        "web",
        "Cancel the flight's calendar event.",
        f"Open /calendar, event '{event['title']}', Cancel event.",
    )
    b.step("web.find_event", match={"title": f"({conf})"}, vars={"event_id": "id"})
    b.step("web.cancel_event", event="{event_id}")
    b.crit(
        "row_changed",
        f"the event of {conf} is cancelled",
        app="calendar",
        table="events",
        where={"title": eq(event["title"])},
        field="title",
        to="Cancelled: " + event["title"],
    )
    b.expect("calendar", "Cancelled:", conf, table="events")
    b.sub("cli", f"Note the cancellation in {travel}.", f"echo '{line}' >> {travel}")
    b.step("cli.append_file", path=travel, content=line + "\n")
    b.crit("file_contains", f"{travel} notes {conf} cancelled", path=travel, text=line)
    b.expect(FILES_APP, f"cancelled {conf}", path=travel)
    b.sub("mcp", f"Tell {peer} by direct message.", f"dm_send to {peer}: '{reply}'")
    b.step("mcp.dm_send", peer=peer, body=reply)
    b.crit(
        "row_added",
        f"a DM to {peer} says {conf} is cancelled",
        app="dm",
        table="messages",
        where={"peer": eq(peer), "direction": eq("out"), "body": has(f"({conf}) is cancelled")},
    )
    b.expect("dm", peer, conf, table="messages")
    return b


def flight_rebook(ctx: Context) -> TaskBuilder:
    """Book again, on a new date, the route of a booking cancelled on an earlier day."""
    bk = prefer_history(ctx, _cancelled(ctx))
    assert bk is not None
    dest, origin = bk["destination"], bk["origin"]
    travel = trip_log(dest)
    new = shift(f"{ctx.date}T{bk['depart_at'][11:]}", days=ctx.rng.randint(3, 8))
    title = f"Flight {origin} -> {dest} (rebooked)"
    line = f"- {said(new)}: {origin} -> {dest}, rebooked"
    b = TaskBuilder("flight_rebook", facts={"destination": dest, "depart": new})
    b.instruction = phrase(
        ctx,
        [
            "I cancelled my '{dest}' flight earlier, but the trip is back on. Book {origin} -> '{dest}' "
            "departing {new} with the flights tool, add a calendar event '{title}' at {new} in the web "
            "calendar, and append '{line}' to {path} from the shell.",
            "Rebook the '{dest}' trip that was cancelled: a new flight from {origin} leaving {new} through "
            "the flights tool, a web calendar event titled '{title}' starting {new}, and the line "
            "'{line}' added to {path} in the terminal.",
            "The '{dest}' trip is on again. Use the flights tool to book {origin} to '{dest}' at {new}, put "
            "'{title}' in the web calendar for {new}, and record '{line}' in {path} with the shell.",
        ],
        dest=dest,
        origin=origin,
        new=said(new),
        title=title,
        line=line,
        path=travel,
    )
    b.sub("mcp", f"Book {origin} -> {dest} at {new}.", f"flights_book origin={origin} destination={dest}.")
    _find(b, ctx, bk, "cancelled")
    b.step("mcp.book_flight", origin="{origin}", destination="{dest}", depart_at=new, var="new_conf")
    b.crit(
        "row_added",
        f"a confirmed booking {origin} -> {dest} departs {new}",
        2.0,
        app="flights",
        table="bookings",
        where={
            "origin": eq(origin),
            "destination": eq(dest),
            "depart_at": eq(new),
            "status": eq("confirmed"),
        },
    )
    b.expect("flights", dest, new, table="bookings")
    b.sub("web", "Add the flight to the calendar.", f"/calendar/new: title '{title}', start {new}.")
    b.step("web.add_event", title=title, start=new, end=shift(new, minutes=180), location=f"{origin} airport")
    b.crit(
        "row_added",
        f"a calendar event '{title}' starts {new}, with nobody invited",
        app="calendar",
        table="events",
        where={"title": eq(title), "start": eq(new), "attendees_json": eq("[]")},
    )
    b.expect("calendar", title, new, table="events")
    b.sub("cli", f"Note the booking in {travel}.", f"echo '{line}' >> {travel}")
    b.step("cli.append_file", path=travel, content=line + "\n")
    b.crit("file_contains", f"{travel} notes the rebooking", path=travel, text=line)
    b.expect(FILES_APP, "rebooked", path=travel)
    return b


def flight_itinerary_mail(ctx: Context) -> TaskBuilder:
    """A confirmed booking's itinerary file from the flights tool, emailed through the webmail."""
    bk = prefer_history(ctx, _confirmed(ctx))
    assert bk is not None
    conf, dest = bk["confirmation"], bk["destination"]
    c = ctx.rng.choice(ctx.contacts("family", "friend", "colleague"))
    path = f"trips/{dest.lower()}.md"
    text = f"{bk['origin']} -> {dest}, departs {said(bk['depart_at'])}, confirmation {conf}"
    b = TaskBuilder("flight_itinerary_mail", facts={"confirmation": conf, "to": c.email})
    b.instruction = phrase(
        ctx,
        [
            "Look up my '{dest}' booking with the flights tool, write '{text}' to {path} from the shell, "
            "and email the same line to {to} from the webmail with the subject 'Itinerary '{dest}''.",
            "{name} wants my '{dest}' itinerary. Get the booking from the flights tool, save the line "
            "'{text}' as {path} in the terminal, then send it to {to} from the webmail (subject "
            "'Itinerary '{dest}'').",
            "Put my '{dest}' flight details in {path} (the line '{text}', written with the shell, taken "
            "from the flights tool) and send that line to {to} in the webmail, subject 'Itinerary '{dest}''.",
        ],
        dest=dest,
        text=text,
        path=path,
        to=c.email,
        name=c.name,
    )
    b.sub("mcp", f"Read the {dest} booking.", f"flights_get {conf}.")
    _find(b, ctx, bk, "confirmed")
    b.sub("cli", f"Write {path}.", f"echo '{text}' > {path}")
    content = f"{bk['origin']} -> {dest}, departs {{depart_date}} at {{depart_time}}, confirmation {{conf}}\n"
    b.step("cli.write_file", path=path, content=content)
    b.crit("file_contains", f"{path} holds the itinerary of {conf}", path=path, text=text)
    b.expect(FILES_APP, conf, said(bk["depart_at"]), path=path)
    b.sub(
        "web",
        f"Email the itinerary to {c.email}.",
        f"/mail/compose to {c.email}, subject 'Itinerary {dest}'.",
    )
    b.step("web.send_mail", to=c.email, subject=f"Itinerary {dest}", body=content.strip())
    b.crit(
        "row_added",
        f"a sent email to {c.email} holds the itinerary",
        2.0,
        app="mail",
        table="messages",
        where={"folder": eq("sent"), "recipients": to(c.email), "body": has(text)},
    )
    b.expect("mail", "{folder=sent}", c.email, conf, table="messages")
    return b


def flight_checkin_reminder(ctx: Context) -> TaskBuilder:
    """A check-in event 24 hours before a confirmed flight, and a todo line."""
    bk = prefer_history(ctx, _confirmed(ctx))
    assert bk is not None
    conf, dest = bk["confirmation"], bk["destination"]
    start = shift(bk["depart_at"], days=-1)
    title = f"Check in {conf}"
    line = f"- [ ] check in for {dest} ({conf}), the day before departure"
    b = TaskBuilder("flight_checkin_reminder", facts={"confirmation": conf, "start": start})
    b.instruction = phrase(
        ctx,
        [
            "Check in opens 24 hours before my '{dest}' flight. Find its departure with the flights tool, "
            "add a web calendar event '{title}' starting 24 hours earlier, and append '{line}' to {path} with the shell.",
            "Remind me to check in for the '{dest}' trip: the flights tool gives the departure; put "
            "'{title}' in the web calendar one day before it, same time, and add the todo line '{line}' "
            "to {path} in the terminal.",
            "Set up check-in for my '{dest}' booking {conf}: departure from the flights tool, a web "
            "calendar event '{title}' exactly a day before, and '{line}' "
            "appended to {path} from the shell.",
        ],
        dest=dest,
        title=title,
        conf=conf,
        line=line,
        path="todo.txt",
    )
    b.sub("mcp", f"Read the {dest} booking's departure.", f"flights_get {conf}: depart_at {bk['depart_at']}.")
    _find(b, ctx, bk, "confirmed")
    b.sub("web", "Add the check-in event.", f"/calendar/new: '{title}' at {start}.")
    b.step(
        "web.add_event",
        title="Check in {conf}",
        start="{depart}",
        end=shift(bk["depart_at"], minutes=30),
        shift_days=-1,
        location="online",
        var="checkin",
    )
    b.crit(
        "row_added",
        f"a calendar event '{title}' starts {start}, with nobody invited",
        2.0,
        app="calendar",
        table="events",
        where={"title": eq(title), "start": eq(start), "attendees_json": eq("[]")},
    )
    b.expect("calendar", title, start, table="events")
    b.sub("cli", "Add the todo line.", f"echo '{line}' >> todo.txt")
    b.step(
        "cli.append_file",
        path="todo.txt",
        content=f"- [ ] check in for {dest} ({{conf}}), the day before departure\n",
    )
    b.crit("file_contains", f"todo.txt has the check-in line for {conf}", path="todo.txt", text=line)
    b.expect(FILES_APP, conf, path="todo.txt")
    return b


def _has_confirmed(ctx: Context) -> bool:
    return bool(_confirmed(ctx))


register_template(Template("flight_reschedule", _has_confirmed, flight_reschedule))
register_template(Template("flight_cancel_trip", _has_confirmed, flight_cancel_trip))
register_template(Template("flight_rebook", lambda ctx: bool(_cancelled(ctx)), flight_rebook))
register_template(Template("flight_itinerary_mail", _has_confirmed, flight_itinerary_mail))
register_template(Template("flight_checkin_reminder", _has_confirmed, flight_checkin_reminder))
