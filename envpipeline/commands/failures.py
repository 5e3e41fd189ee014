"""One top-level CLI handler: a mistake the user can fix ends in one line on stderr and exit 2.

`CleanErrorGroup` is the class of the ``envpipeline`` group. Whatever a command raises passes
through its `invoke`, and what a user can fix becomes a `OneLineError`:

- the project's own errors (`envpipeline.errors.EnvpipelineError`), whose messages already say
  what was wrong and what to do;
- OS errors on a path the user named (missing, not a folder, a folder where a file was expected,
  read-only file system, permission, no space), phrased by `describe_os_error`;
- a file that is not UTF-8 text, and input nested too deeply to read (RecursionError);
- click's usage errors (an unknown option, a value out of range), shortened to one line with a
  pointer to ``--help``.

Anything else is a bug and keeps its traceback. ``--debug`` (or ``ENVPIPELINE_DEBUG=1``) shows the
traceback of a handled error too.
"""

from __future__ import annotations

import errno
import os
from typing import IO, Any

import click

from envpipeline.errors import EnvpipelineError

DEBUG_ENV = "ENVPIPELINE_DEBUG"
#: The exit status of every error the user can fix (click's own usage errors use it too).
USER_ERROR_EXIT = 2

#: errno -> (what happened, what to do) for a path the user named.
OS_ERROR_HINTS: dict[int, tuple[str, str]] = {
    errno.ENOENT: ("does not exist", "check the path"),
    errno.ENOTDIR: ("has a file where a folder is needed", "choose a path whose parents are all folders"),
    errno.EISDIR: ("is a folder, not a file", "pass a file"),
    errno.EROFS: ("is on a read-only file system", "choose a writable folder (--out / --home)"),
    errno.EACCES: ("is not accessible (permission denied)", "fix its permissions or choose another path"),
    errno.EPERM: (
        "is not accessible (operation not permitted)",
        "fix its permissions or choose another path",
    ),
    errno.ENOSPC: ("cannot be written: no space left on the device", "free space or choose another folder"),
    errno.EDQUOT: ("cannot be written: disk quota exceeded", "free space or choose another folder"),
    errno.EEXIST: ("already exists", "remove it or choose another path"),
    errno.ENAMETOOLONG: ("has a name that is too long", "choose a shorter path"),
    errno.ELOOP: ("has too many levels of symbolic links", "check the links on that path"),
}


class OneLineError(click.ClickException):
    """A user error shown as ``error: <message>`` on one line of stderr; exit status 2."""

    exit_code = USER_ERROR_EXIT

    def show(self, file: IO[Any] | None = None) -> None:
        """Print the message on one line (newlines folded) to stderr."""
        click.echo(f"error: {one_line(self.format_message())}", err=True, file=file)


def one_line(text: str) -> str:
    """`text` with its lines joined by '; ' (blank lines dropped)."""
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


def describe_os_error(error: OSError) -> str:
    """One line naming the path of an OS error, what happened to it and what to do."""
    path = error.filename if error.filename is not None else "a file"
    if error.filename2 is not None:
        path = f"{path} -> {error.filename2}"
    happened, fix = OS_ERROR_HINTS.get(
        error.errno or 0, (f"failed: {error.strerror or error}", "check the path and its permissions")
    )
    return f"{path} {happened}; {fix}"


def describe(error: BaseException) -> str | None:
    """The one line a user sees for `error`, or None when it is not something the user can fix."""
    if isinstance(error, EnvpipelineError):
        # UnknownTaskError is also a KeyError, whose str() quotes the message
        return str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    if isinstance(error, OSError):
        return describe_os_error(error)
    if isinstance(error, UnicodeDecodeError):
        return f"a file is not UTF-8 text ({error.reason} at byte {error.start}); pass a text file (UTF-8)"
    if isinstance(error, RecursionError):
        return "the input is nested too deeply to read; flatten it"
    return None


def debug_enabled(ctx: click.Context | None = None) -> bool:
    """Whether tracebacks were asked for: ``--debug`` on the group, or ``ENVPIPELINE_DEBUG=1``."""
    if os.environ.get(DEBUG_ENV, "").strip().lower() in ("1", "true", "yes"):
        return True
    return bool(ctx is not None and ctx.find_root().params.get("debug"))


def usage_line(error: click.UsageError) -> OneLineError:
    """A click usage error as one line with a pointer to the command's --help."""
    where = f" (see `{error.ctx.command_path} --help`)" if error.ctx is not None else ""
    return OneLineError(f"{one_line(error.format_message())}{where}")


class CleanErrorGroup(click.Group):
    """A click group whose commands end user errors with one line and exit 2 (see the module)."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        """The group's context; a bad group option is one line too."""
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as e:
            if debug_enabled():
                raise
            raise usage_line(e) from e

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; errors a user can fix become a `OneLineError`."""
        try:
            return super().invoke(ctx)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as e:
            if debug_enabled(ctx):
                raise
            raise usage_line(e) from e
        except click.ClickException:
            raise
        except Exception as e:
            line = describe(e)
            if line is None or debug_enabled(ctx):
                raise
            raise OneLineError(line) from e
