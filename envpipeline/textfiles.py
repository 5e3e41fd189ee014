"""Text files a user names (held-out lists, pass-rate and rollout tables): read as UTF-8 or refused.

A binary file handed to an option that wants text used to end in a bare UnicodeDecodeError that
named no file. `read_text_file` turns it into a `ConfigError` naming the file, the option's role
and the fix; OS errors (missing, a folder, permission) keep their path and reach the CLI's
one-line handler as they are.
"""

from __future__ import annotations

from pathlib import Path

from envpipeline.errors import ConfigError


def read_text_file(path: Path, what: str) -> str:
    """The UTF-8 text of `path`, described as `what` in errors (e.g. "the rollouts table").

    Raises:
        ConfigError: the file is not UTF-8 text.
        OSError: the file cannot be read (its filename set).
    """
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(
            f"{path}: {what} is not UTF-8 text (byte {e.start}: {e.reason}); pass a text file"
        ) from e
