"""Templates over login accounts of earlier days (MCP accounts tool, webmail, shell notes).

password_rotate_site   web>mcp>cli      a login created on an earlier day gets a new password
password_after_alert   mcp>mcp>web>cli  an earlier 'password changed' alert: reset, report, note
"""

from __future__ import annotations

from envpipeline.worlds.schema import FILES_APP, password_hash
from envpipeline.worlds.task_builder import Context, TaskBuilder, eq, has, to
from envpipeline.worlds.templates._life import history_rows, phrase, prefer_history
from envpipeline.worlds.templates.base import Template
from envpipeline.worlds.templates.registry import register_template

WORDS = ("amber", "cobalt", "harbor", "meadow", "quartz", "saffron", "timber", "violet", "willow", "zephyr")


def new_password(ctx: Context) -> str:
    """A fresh password the instruction hands over (two words and a number)."""
    first, second = ctx.rng.sample(WORDS, 2)
    return f"{first}-{second}-{ctx.rng.randint(10, 99)}"


def _site_logins(ctx: Context) -> list[dict]:
    rows = history_rows(ctx, "accounts", "users", "username LIKE '%@%'")
    welcomed = []
    for row in rows:
        site = row["username"].split("@", 1)[1]
        mails = ctx.reader.query("mail", "SELECT id FROM messages WHERE subject = ?", [f"Welcome to {site}"])
        if mails:
            welcomed.append({**row, "_site": site})
    return welcomed


def _logins(ctx: Context, not_this: str) -> list[str]:
    rows = ctx.reader.query("accounts", "SELECT username FROM users")
    return [r["username"] for r in rows if r["username"] != not_this] or ["nobody"]


def _password_criterion(b: TaskBuilder, username: str, password: str) -> None:
    b.crit(
        "row_changed",
        f"{username} has the new password",
        2.0,
        app="accounts",
        table="users",
        where={"username": eq(username)},
        field="password_hash",
        to=password_hash(password),
    )
    b.expect("accounts", username, table="users")


def password_rotate_site(ctx: Context) -> TaskBuilder:
    """The login created at a site on an earlier day (its welcome mail names it) gets a new password."""
    row = prefer_history(ctx, _site_logins(ctx))
    assert row is not None
    site, user, password = row["_site"], row["username"], new_password(ctx)
    line = f"- {site}: password rotated on {ctx.date}"
    b = TaskBuilder("password_rotate_site", facts={"username": user, "site": site})
    b.instruction = phrase(
        ctx,
        [
            "I signed up at {site} on day {day}. Find the login name in the welcome email in the webmail, "
            "set its password to '{password}' with the accounts tool, and append '{line}' to {path} from "
            "the shell (never write the password itself); then tell welcome@{site} from the webmail "
            "'Password rotated for <login>.'",
            "Rotate the {site} password: the webmail's 'Welcome to {site}' message names the account, the "
            "accounts tool sets the new password '{password}', {path} gets the line '{line}' through "
            "the shell, and welcome@{site} gets the email 'Password rotated for <login>.' from the webmail.",
            "Security sweep for {site}: read which login I created there (welcome email, webmail), change "
            "its password to '{password}' through the accounts tool, add '{line}' to {path} in the "
            "terminal, and email welcome@{site} 'Password rotated for <login>.' from the webmail.",
        ],
        site=site,
        day=row["_day"],
        password=password,
        line=line,
        path="notes/accounts.md",
    )
    b.sub("web", f"Read the 'Welcome to {site}' email.", f"Open the inbox message 'Welcome to {site}'.")
    b.step(
        "web.read_mail",
        subject=f"Welcome to {site}",
        pattern=r"Your account (\S+) is ready",
        vars=["login"],
        distractors={"login": _logins(ctx, user)},
    )
    b.sub("mcp", f"Set the password of {user}.", f"accounts_set_password username={user}.")
    b.step("mcp.set_password", username="{login}", new_password=password)
    _password_criterion(b, user, password)
    b.sub("cli", "Note the rotation.", f"echo '{line}' >> notes/accounts.md")
    b.step("cli.append_file", path="notes/accounts.md", content=line + "\n")
    b.crit(
        "file_contains", f"notes/accounts.md notes the {site} rotation", path="notes/accounts.md", text=line
    )
    b.expect(FILES_APP, site, path="notes/accounts.md")
    b.sub("web", f"Tell welcome@{site}.", f"/mail/compose to welcome@{site}: 'Password rotated for {user}.'")
    b.step(
        "web.send_mail",
        to=f"welcome@{site}",
        subject=f"Re: Welcome to {site}",
        body="Password rotated for {login}.",
    )
    b.crit(
        "row_added",
        f"welcome@{site} hears the rotation of {user}",
        app="mail",
        table="messages",
        where={
            "folder": eq("sent"),
            "recipients": to(f"welcome@{site}"),
            "body": has(f"Password rotated for {user}."),
        },
    )
    b.expect("mail", "{folder=sent}", f"welcome@{site}", user, table="messages")
    return b


def _alerts(ctx: Context) -> list[dict]:
    return history_rows(ctx, "mail", "messages", "subject = 'Your password was changed' AND folder = 'inbox'")


def password_after_alert(ctx: Context) -> TaskBuilder:
    """A 'password changed' alert of an earlier day: reset the login, tell security, note it."""
    alert = _alerts(ctx)[-1]  # the newest alert: the one the mail tool lists first
    user = ctx.persona.username
    when = alert["sent_at"][:10]
    password = new_password(ctx)
    body = f"I reset the password of {user} after the change on {when}."
    line = f"- {when}: reset {user} after the alert"
    b = TaskBuilder("password_after_alert", facts={"username": user, "changed_on": when})
    b.instruction = phrase(
        ctx,
        [
            "I don't remember changing my password. Read the security alert with the mail tool, set the "
            "password of the login it names to '{password}' with the accounts tool, email "
            "security@accounts.example from the webmail '{body}', and add '{line}' to {path} in the shell.",
            "The password-change alert from day {day} worries me. Using the mail tool, find which login "
            "and date it names; reset that login to '{password}' through the accounts tool; send "
            "security@accounts.example the email '{body}' from the webmail; log '{line}' in {path} "
            "with the shell.",
        ],
        password=password,
        body="I reset the password of <login> after the change on <date>.",
        line="- <date>: reset <login> after the alert",
        path="notes/security.md",
        day=alert["_day"],
    )
    b.sub("mcp", "Read the security alert.", "mail_read the message 'Your password was changed'.")
    b.step(
        "mcp.read_mail",
        subject="Your password was changed",
        pattern=r"The password of (\S+) was changed on (\S+?)\.",
        vars=["user", "when"],
        distractors={"user": _logins(ctx, user)},
    )
    b.sub("mcp", f"Reset {user}.", f"accounts_set_password username={user}.")
    b.step("mcp.set_password", username="{user}", new_password=password)
    _password_criterion(b, user, password)
    b.sub("web", "Report to security.", "/mail/compose to security@accounts.example.")
    b.step(
        "web.send_mail",
        to="security@accounts.example",
        subject="Re: Your password was changed",
        body="I reset the password of {user} after the change on {when}.",
    )
    b.crit(
        "row_added",
        "security@accounts.example hears about the reset",
        app="mail",
        table="messages",
        where={"folder": eq("sent"), "recipients": to("security@accounts.example"), "body": has(body)},
    )
    b.expect("mail", "{folder=sent}", "security@accounts.example", table="messages")
    b.sub("cli", "Note it.", f"echo '{line}' >> notes/security.md")
    b.step("cli.append_file", path="notes/security.md", content="- {when}: reset {user} after the alert\n")
    b.crit("file_contains", "notes/security.md notes the reset", path="notes/security.md", text=line)
    b.expect(FILES_APP, user, path="notes/security.md")
    return b


register_template(Template("password_rotate_site", lambda ctx: bool(_site_logins(ctx)), password_rotate_site))
register_template(Template("password_after_alert", lambda ctx: bool(_alerts(ctx)), password_after_alert))
