"""What an import did: substitutions, rewrites, flags and warnings per bundle (pure data)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, computed_field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Substitution(_Strict):
    """A base image replaced by ours."""

    file: str
    line: int
    original: str
    replacement: str
    reason: str


class Rewrite(_Strict):
    """A changed or generated piece of a file (line 0: the whole file)."""

    file: str
    line: int
    original: str
    replacement: str
    reason: str


FlagName = Literal["needs_network_build", "needs_network_at_test", "compose", "needs_image"]
#: What a build's network lines reach: the package registries builds are given (Debian packages,
#: Python packages with the host's pip configuration) or a host no build here can reach.
BuildNetworkNeed = Literal["package_registries", "unreachable_host"]
Schema = Literal["1.0", "1.1"]


class Flag(_Strict):
    """Something our sandboxes cannot run as is."""

    name: FlagName
    file: str
    lines: list[str]
    message: str
    #: for ``needs_network_build``: what the lines reach (None for the other flags)
    network: BuildNetworkNeed | None = None


class ImportReport(_Strict):
    """What one import did; `error` is set (and nothing written) when the task was unreadable."""

    task: str
    source: str
    out: str
    substitutions: list[Substitution] = []
    rewrites: list[Rewrite] = []
    flags: list[Flag] = []
    warnings: list[str] = []
    error: str | None = None
    source_format: Literal["terminal-bench-1", "harbor", "unknown"] = "terminal-bench-1"

    @computed_field
    @property
    def status(self) -> Literal["imported", "failed"]:
        """`failed` when nothing was written (see `error`)."""
        return "imported" if self.error is None else "failed"

    @property
    def ok(self) -> bool:
        """Imported without error (flags and warnings may still need attention)."""
        return self.error is None
