"""The CLI interface of a world day: a bash shell over the persona's ``home/``, inside the sandbox.

`WorldShell` opens one sandbox session (the local bubblewrap/namespace backend by default) from a
tiny generated bundle whose Dockerfile sets ``HOME=/app`` and ``WORKDIR /app``, and uploads the day
folder's ``home/`` as ``/app``. After every command it reads ``/app`` back as a tar through the
session API (`SandboxSession.pack`: the local sandbox reads it from the host without following the
agent's links, any other backend packs it inside) and mirrors it onto ``home/`` on the host with
tarfile's ``data`` filter (no absolute paths, no links or devices escaping the folder). If
``home/`` changed on the host in between (the web app or a script wrote there), it is uploaded
again before the next command; moved to another day folder, it empties ``/app`` and ``/tmp`` first
(`SandboxSession.empty`). The app databases are not mounted: the shell sees files only.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import tarfile
import tempfile
from pathlib import Path
from types import TracebackType

from envpipeline.errors import SandboxError
from envpipeline.sandbox.base import ExecResult, Limits, Sandbox, SandboxSession
from envpipeline.terminal.bundle import read_bundle

DOCKERFILE = "FROM debian:bookworm-slim\nENV HOME=/app\nWORKDIR /app\n"


def _tree_digest(folder: Path) -> str:
    """sha256 over every path (and file's bytes) under `folder`: tells whether home/ changed."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        if path.is_file() and not path.is_symlink():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _default_sandbox() -> Sandbox:
    from envpipeline.sandbox.local import LocalSandbox

    if not LocalSandbox.available():
        raise SandboxError(
            "no sandbox for the world shell: the local sandbox needs root plus bubblewrap or unshare "
            "(run `make system-deps`), or pass sandbox= explicitly"
        )
    return LocalSandbox()


class WorldShell:
    """Shell commands over ``<day_dir>/home`` run in a sandbox session (``/app`` = home)."""

    def __init__(
        self, day_dir: str | Path, sandbox: Sandbox | None = None, limits: Limits | None = None
    ) -> None:
        self.day_dir = Path(day_dir).resolve()
        self.home = self.day_dir / "home"
        if not self.home.is_dir():
            raise FileNotFoundError(f"{self.day_dir}: not a world day folder (no home/)")
        self.sandbox = sandbox or _default_sandbox()
        self.limits = limits or Limits(memory_mb=1024, output_bytes=200_000)
        self._session: SandboxSession | None = None
        self._bundle_dir: Path | None = None
        self._synced: str | None = None
        self._wipe: tuple[str, ...] = ("/app",)

    @property
    def backend(self) -> str:
        """What runs the commands: ``sandbox:<backend class>``."""
        return f"sandbox:{type(self.sandbox).__name__}"

    # -- session --------------------------------------------------------------------------------
    def open(self) -> WorldShell:
        """Start the sandbox session and upload home/ (done by the first `run` if not called)."""
        if self._session is not None:
            return self
        self._bundle_dir = Path(tempfile.mkdtemp(prefix="world-shell-"))
        (self._bundle_dir / "environment").mkdir()
        (self._bundle_dir / "environment" / "Dockerfile").write_text(DOCKERFILE)
        (self._bundle_dir / "task.toml").write_text(
            'version = "1.0"\n\n[environment]\nbuild_timeout_sec = 60\n'
        )
        (self._bundle_dir / "instruction.md").write_text(f"A shell over {self.home}.\n")
        try:
            self._session = self.sandbox.open(read_bundle(self._bundle_dir), self.limits)
            self._push()
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        """Stop the session and remove the generated bundle (idempotent)."""
        if self._session is not None:
            self._session.close()
            self._session = None
        if self._bundle_dir is not None:
            shutil.rmtree(self._bundle_dir, ignore_errors=True)
            self._bundle_dir = None

    def __enter__(self) -> WorldShell:
        return self.open()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def rebind(self, day_dir: str | Path) -> None:
        """Serve another day folder's ``home/`` from the same sandbox session: before the next
        command ``/app`` and ``/tmp`` are emptied and the new ``home/`` is uploaded."""
        day_dir = Path(day_dir).resolve()
        if not (day_dir / "home").is_dir():
            raise FileNotFoundError(f"{day_dir}: not a world day folder (no home/)")
        self.day_dir, self.home = day_dir, day_dir / "home"
        self._synced = None
        self._wipe = ("/app", "/tmp")

    # -- commands -------------------------------------------------------------------------------
    def run(self, command: str, timeout_sec: float = 30.0) -> ExecResult:
        """Run `command` with bash in /app (= home/), then copy /app back onto home/."""
        self.open()
        assert self._session is not None
        if _tree_digest(self.home) != self._synced:
            self._push()
        result = self._session.exec(command, timeout_sec, workdir="/app")
        self._pull()
        return result

    def _push(self) -> None:
        """Replace /app's contents with home/."""
        assert self._session is not None
        try:
            self._session.empty(*self._wipe)
        except SandboxError as e:
            raise SandboxError(f"cannot clear {' '.join(self._wipe)} in the world shell: {e}") from e
        self._wipe = ("/app",)
        if any(self.home.iterdir()):
            self._session.upload(self.home, "/app")
        self._synced = _tree_digest(self.home)

    def _pull(self) -> None:
        """Read /app back as a tar (`SandboxSession.pack`) and mirror it onto home/."""
        assert self._session is not None
        try:
            data = self._session.pack("/app")
        except SandboxError as e:
            raise SandboxError(f"cannot read the world shell's home back: {e}") from e
        staging = Path(tempfile.mkdtemp(prefix=".home-", dir=self.day_dir))
        try:
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                tar.extractall(staging, filter="data")
            old = self.day_dir / f".home-old-{staging.name}"
            self.home.rename(old)
            staging.rename(self.home)
            shutil.rmtree(old, ignore_errors=True)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        self.home.chmod(0o755)
        self._synced = _tree_digest(self.home)
