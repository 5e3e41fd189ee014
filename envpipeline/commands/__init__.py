"""Sub-command groups of the `envpipeline` CLI (they need the `[cli]` extra: click, rich, duckdb)."""

from envpipeline.errors import MissingExtraError

try:
    import click  # noqa: F401
    import rich  # noqa: F401
except ImportError as missing:
    raise MissingExtraError("cli", missing, needed_by="the envpipeline command") from missing
