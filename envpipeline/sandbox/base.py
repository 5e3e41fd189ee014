"""The Sandbox protocol shared by every backend.

A `Sandbox` opens a `SandboxSession` for one bundle: it builds or prepares the agent-visible
environment (``environment/``: an image for Docker, a root for local), then the caller uploads
``solution/`` or ``tests/`` only when needed, executes commands with a wall timeout, reads the
reward file and closes the session, which removes everything it created.
"""

from __future__ import annotations

import shlex
from abc import ABC, abstractmethod
from pathlib import Path
from types import TracebackType
from typing import Annotated, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from envpipeline.errors import SandboxError
from envpipeline.models.bundle import Bundle

#: The offline image every generated bundle builds FROM (``make base-image`` builds it).
BASE_IMAGE = "envpipeline/base:bookworm"
#: Where `SandboxSession.pack` writes its archive inside the sandbox (removed once read back).
PACK_ARCHIVE = "/tmp/.envpipeline-pack.tar"


class Limits(BaseModel):
    """Resource limits of one session."""

    model_config = ConfigDict(extra="forbid")

    cpus: Annotated[float, Field(gt=0, description="CPU cores")] = 1.0
    memory_mb: Annotated[int, Field(gt=0, description="memory (address space locally)")] = 1024
    pids: Annotated[int, Field(gt=0, description="maximum processes")] = 256
    file_size_mb: Annotated[int, Field(gt=0, description="largest file a process may write")] = 256
    output_bytes: Annotated[int, Field(gt=0, description="stdout/stderr kept per exec")] = 1_000_000
    storage_mb: Annotated[
        int,
        Field(
            gt=0, description="disk for the session's folders (local: its whole root; Docker: /app and /logs)"
        ),
    ] = 2048


class ExecResult(BaseModel):
    """The outcome of one command."""

    model_config = ConfigDict(extra="forbid")

    exit_code: Annotated[int | None, Field(description="exit status; None if killed at the timeout")]
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    truncated: Annotated[bool, Field(description="output exceeded the cap")] = False
    duration_sec: float = 0.0


class EnvironmentBuildError(SandboxError):
    """The bundle's environment could not be built (bad Dockerfile, unsupported instruction)."""


class SandboxSession(ABC):
    """One live environment for one bundle."""

    #: why this session may behave unlike a container of the bundle's image (e.g. the local
    #: sandbox on the host's /usr); trials and verdicts carry them as reasons
    notices: tuple[str, ...] = ()

    @abstractmethod
    def upload(self, source: Path, destination: str) -> None:
        """Copy a host folder (e.g. ``solution/``) to an absolute sandbox path (``/solution``)."""

    @abstractmethod
    def exec(self, command: str, timeout_sec: float, workdir: str = "/app") -> ExecResult:
        """Run a bash command; kill everything it started at the timeout."""

    @abstractmethod
    def read_file(self, path: str) -> bytes | None:
        """Read a file from the sandbox (None if it does not exist)."""

    def pack(self, directory: str) -> bytes:
        """A tar archive of `directory`'s contents as the sandbox user sees them (members ``./...``,
        symlinks stored as links); SandboxError when the user's ``tar`` cannot read it all.

        This default packs inside the sandbox (``tar`` into a file under ``/tmp``, read back, then
        removed); a backend may read the folder from outside instead, with the same result."""
        archive = PACK_ARCHIVE
        packed = self.exec(
            f"tar -cf {archive} -C {shlex.quote(directory)} . && chmod 600 {archive}", 120, workdir="/"
        )
        if packed.exit_code != 0:
            self.exec(f"rm -f {archive}", 30, workdir="/")
            raise SandboxError(f"cannot pack {directory}: {packed.stderr.strip()[-500:]}")
        data = self.read_file(archive)
        self.exec(f"rm -f {archive}", 30, workdir="/")
        if data is None:
            raise SandboxError(f"the archive of {directory} vanished before it was read")
        return data

    def empty(self, *folders: str) -> None:
        """Remove everything inside each of `folders` (absolute sandbox paths; each folder stays,
        with its owner and mode); SandboxError when something could not be removed.

        This default runs ``find -delete`` inside as the sandbox user; a backend may remove the
        contents from outside instead (never following a link the agent planted)."""
        quoted = " ".join(shlex.quote(folder) for folder in folders)
        done = self.exec(f"find {quoted} -mindepth 1 -delete", 60, workdir="/")
        if done.exit_code != 0:
            raise SandboxError(f"cannot empty {', '.join(folders)}: {done.stderr.strip()[-500:]}")

    @abstractmethod
    def kill_all(self) -> None:
        """Kill every process the commands of this session left running (the session stays open)."""

    @abstractmethod
    def clear(self, path: str) -> None:
        """Empty a sandbox folder (``/tests``, ``/logs/verifier``) whatever a command left there.

        Links the agent planted on the way are removed, not followed; the folder exists, empty and
        writable by the sandbox user, afterwards.
        """

    @abstractmethod
    def make_read_only(self, path: str) -> None:
        """Make a folder (``/tests`` after its fresh upload) and everything in it owned by root and
        not writable by the sandbox user, so nothing the verifier runs can rewrite the tests."""

    @abstractmethod
    def close(self) -> None:
        """Stop and remove everything the session created."""

    def __enter__(self) -> SandboxSession:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


class Sandbox(ABC):
    """A backend that opens sessions."""

    backend: ClassVar[str]

    @abstractmethod
    def open(self, bundle: Bundle, limits: Limits) -> SandboxSession:
        """Build/prepare the bundle's environment and start a session (EnvironmentBuildError)."""

    @classmethod
    @abstractmethod
    def available(cls) -> bool:
        """Whether this backend can run here (engine answers / isolation tools exist)."""

    @classmethod
    def provides_image(cls, image: str) -> bool:
        """Whether `image` is present here as is (a bundle naming it needs no substitution).

        False unless a backend can run foreign images (Docker: the engine has it).
        """
        return False
