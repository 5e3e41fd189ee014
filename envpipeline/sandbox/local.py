"""The local backend: bubblewrap (or ``unshare`` namespaces) as root, for machines without Docker.

A session is a temp root holding ``app/ logs/ tests/ solution/ tmp/``, bind-mounted at ``/app``,
``/logs``, ``/tests``, ``/solution`` and ``/tmp`` of a sandbox whose other paths are the host's
``/usr`` (and the ``/bin``, ``/lib``... symlinks) and ``/etc``, read-only, plus a private
``/proc`` and ``/dev``. A *keeper* process (``bwrap --die-with-parent`` in new mount, PID, net,
IPC and UTS namespaces; no user namespace) holds the namespaces for the life of the session, so
background processes and ``/tmp`` persist between commands as they do in a container.

Every command enters those namespaces with ``nsenter`` and drops to an unprivileged uid/gid
(65534) with ``setpriv`` (no groups, no capabilities, ``no_new_privs``) before ``env -i`` gives
it a minimal environment: the operator's variables never reach it. Limits are rlimits set by
``prlimit`` on the way in: CPU seconds, address space (``memory_mb``), processes (``pids``;
enforced because the uid is not root), file size and open files. Output is drained from both
pipes in one ``select`` loop and only the first ``output_bytes`` of each are kept. At the wall
timeout ``kill -9 -1`` runs as the sandbox uid inside the PID namespace (atomic against forks,
so fork bombs and ``setsid`` escapees go too); ``close()`` kills the keeper, which takes the
whole PID namespace with it, and removes the temp root.

The environment is prepared from ``environment/Dockerfile`` (see `envpipeline.sandbox.dockerfile`):
FROM is recorded, COPY/ADD unpack into ``/app`` as the sandbox user, RUN executes inside the
sandbox under the same limits without network, and LABEL/EXPOSE/CMD/ENTRYPOINT/USER/ARG... are
recorded and skipped.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
import uuid
import weakref
from pathlib import Path
from typing import IO, ClassVar

from envpipeline.errors import SandboxError
from envpipeline.sandbox import dockerfile as df
from envpipeline.sandbox import isolation as iso
from envpipeline.sandbox.base import ExecResult, Limits, Sandbox, SandboxSession
from envpipeline.terminal.bundle import Bundle

#: The unprivileged user every sandboxed process runs as (``nobody``).
SANDBOX_UID = 65534
SANDBOX_GID = 65534
#: Sandbox paths `upload` may write under.
UPLOAD_ROOTS = ("/solution", "/tests", "/app", "/logs")
#: Sandbox paths the Dockerfile may COPY to or WORKDIR into.
BUILD_ROOTS = ("/app",)
#: Largest file `read_file` returns (bytes).
READ_LIMIT = 64 * 1024 * 1024


class LocalSession(SandboxSession):
    """A live keeper process and the temp root of one bundle."""

    def __init__(self, root: Path, isolation: str, limits: Limits, uid: int, gid: int) -> None:
        self.root, self.isolation, self.limits = root, isolation, limits
        self.uid, self.gid = uid, gid
        self.session_id = root.name
        #: the Dockerfile's ENV (added to iso.BASE_ENV for every command)
        self.env: dict[str, str] = {}
        #: the image the Dockerfile names in FROM (not used locally: the host's /usr stands in)
        self.base_image: str | None = None
        #: (line, keyword) of instructions recorded but not executed
        self.ignored: list[tuple[int, str]] = []
        self._closed = False
        self._pid1: int | None = None
        self._keeper = subprocess.Popen(
            iso.keeper_argv(isolation, root),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={"PATH": iso.BASE_ENV["PATH"]},
            start_new_session=True,
        )
        self._finalizer = weakref.finalize(self, iso.stop_keeper, self._keeper, None, root)
        self._wait_ready()

    def _wait_ready(self, timeout: float = 20.0) -> None:
        """Wait for KEEPALIVE's "ready" and find the namespace's PID 1 (the keeper's child)."""
        assert self._keeper.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self._keeper.stdout, selectors.EVENT_READ)
            ready = selector.select(timeout) and self._keeper.stdout.readline().strip() == b"ready"
        children = iso.children(self._keeper.pid) if ready else []
        if not children:
            self._keeper.kill()
            _, err = self._keeper.communicate(timeout=30)
            self.close()
            raise SandboxError(
                f"{self.isolation} sandbox did not start: {err.decode(errors='replace').strip()[-1000:]}"
            )
        self._pid1 = children[0]
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, iso.stop_keeper, self._keeper, self._pid1, self.root)

    def _spawn(
        self,
        argv: list[str],
        *,
        workdir: str = "/",
        timeout: float | None = None,
        stdin: IO[bytes] | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start `argv` inside the namespaces as the sandbox user (with rlimits when `timeout` is set)."""
        if self._closed:
            raise SandboxError(f"session {self.session_id} is closed")
        if self._keeper.poll() is not None:
            raise SandboxError(
                f"session {self.session_id}: the sandbox is gone (exit {self._keeper.returncode})"
            )
        command = iso.enter_argv(self._pid1, self.uid, self.gid, self.env, workdir, self.limits, timeout)
        command += argv
        return subprocess.Popen(
            command,
            stdin=stdin if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={"PATH": iso.BASE_ENV["PATH"]},
            start_new_session=True,
        )

    def _run_quietly(
        self, argv: list[str], stdin: IO[bytes] | None = None, timeout: float = 300.0
    ) -> tuple[int, bytes, bytes]:
        """Run a helper (no rlimits) to completion: (exit code, stdout, stderr)."""
        process = self._spawn(argv, stdin=stdin)
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as e:
            process.kill()
            process.communicate()
            raise SandboxError(
                f"session {self.session_id}: {argv[0]} did not finish in {timeout:.0f} s"
            ) from e
        return process.returncode, out, err

    def exec(self, command: str, timeout_sec: float, workdir: str = "/app") -> ExecResult:
        """Run `command` with bash in `workdir`; at the timeout kill every sandbox process."""
        seconds = max(timeout_sec, 0.001)
        started = time.monotonic()
        process = self._spawn(["/bin/bash", "-c", command], workdir=workdir, timeout=seconds)
        deadline, timed_out = started + seconds, False
        try:
            out, err, truncated, timed_out = iso.collect_output(process, deadline, self.limits.output_bytes)
            if not timed_out:
                # the pipes can close before the command exits (or before nsenter has reaped it)
                try:
                    process.wait(timeout=max(deadline - time.monotonic(), 0.0) + 0.05)
                except subprocess.TimeoutExpired:
                    timed_out = True
        finally:
            if timed_out or process.poll() is None:
                self.kill_all()
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    stream.close()
        return ExecResult(
            exit_code=None if timed_out else process.returncode,
            stdout=out.decode(errors="replace"),
            stderr=err.decode(errors="replace"),
            timed_out=timed_out,
            truncated=truncated,
            duration_sec=round(time.monotonic() - started, 3),
        )

    def kill_all(self) -> None:
        """Kill every process of the sandbox user in this session (``kill -9 -1`` in the PID namespace)."""
        if not self._closed and self._keeper.poll() is None:
            self._run_quietly(["/bin/bash", "-c", "kill -9 -1 2>/dev/null; true"], timeout=30)

    def extract(self, archive: IO[bytes], directory: str) -> None:
        """Unpack a tar stream into a sandbox directory, as the sandbox user (symlinks resolve inside)."""
        archive.seek(0)
        script = 'mkdir -p -- "$1" && exec tar -x --no-same-owner -C "$1" -f -'
        code, _, err = self._run_quietly(["/bin/sh", "-c", script, "extract", directory], stdin=archive)
        if code != 0:
            raise SandboxError(
                f"cannot unpack into {directory}: {err.decode(errors='replace').strip()[-1000:]}"
            )

    def upload(self, source: Path, destination: str) -> None:
        """Copy a host folder's contents (or a file) under `destination` (one of UPLOAD_ROOTS)."""
        target = os.path.normpath(destination)
        if not destination.startswith("/") or not any(
            target == root or target.startswith(root + "/") for root in UPLOAD_ROOTS
        ):
            raise SandboxError(f"upload destination must be under {', '.join(UPLOAD_ROOTS)}: {destination}")
        source = Path(source)
        if not source.exists():
            raise SandboxError(f"upload source does not exist: {source}")
        with tempfile.TemporaryFile() as archive:
            with tarfile.open(fileobj=archive, mode="w", format=tarfile.PAX_FORMAT) as tar:
                children = sorted(source.iterdir()) if source.is_dir() else [source]
                for child in children:
                    tar.add(child, arcname=child.name)
            self.extract(archive, target)

    def read_file(self, path: str) -> bytes | None:
        """The bytes of a regular file as the sandbox user sees it (first READ_LIMIT bytes), or None."""
        if not path.startswith("/"):
            raise SandboxError(f"read_file needs an absolute path: {path}")
        script = f'test -f "$1" || exit 3; exec head -c {READ_LIMIT} -- "$1"'
        code, out, err = self._run_quietly(["/bin/sh", "-c", script, "read_file", path], timeout=120)
        if code == 3:
            return None
        if code != 0:
            raise SandboxError(f"cannot read {path}: {err.decode(errors='replace').strip()}")
        return out

    def close(self) -> None:
        """Kill the sandbox (its whole PID namespace) and remove the temp root (idempotent)."""
        if not self._closed:
            self._closed = True
            self._finalizer()


class LocalSandbox(Sandbox):
    """Prepares bundles from their Dockerfile inside bubblewrap/namespaces and runs sessions there."""

    backend: ClassVar[str] = "local"

    def __init__(
        self,
        build_timeout_sec: float | None = None,
        uid: int = SANDBOX_UID,
        gid: int = SANDBOX_GID,
        isolation: str | None = None,
    ) -> None:
        if uid == 0 or gid == 0:
            raise SandboxError("the local sandbox never runs code as root")
        if isolation not in (None, *iso.PROBES):
            raise SandboxError(f"unknown isolation '{isolation}'; choose one of {', '.join(iso.PROBES)}")
        #: "bwrap" or "unshare" to force one (default: the first that works)
        self.isolation = isolation
        #: overrides the bundle's ``[environment].build_timeout_sec`` when set
        self.build_timeout_sec = build_timeout_sec
        self.uid, self.gid = uid, gid

    @classmethod
    def available(cls) -> bool:
        """Whether bubblewrap or unshare isolates here (needs root and util-linux/coreutils tools)."""
        return iso.detect_isolation() is not None

    def open(self, bundle: Bundle, limits: Limits) -> LocalSession:
        """Create the temp root, start the sandbox and replay the Dockerfile (EnvironmentBuildError)."""
        if self.isolation:
            isolation = self.isolation if iso.isolation_works(self.isolation) else None
        else:
            isolation = iso.detect_isolation()
        if isolation is None:
            raise SandboxError(
                "no isolation here (needs root plus bubblewrap or unshare); refusing to run unisolated"
            )
        if not bundle.paths.dockerfile.is_file():
            raise df.EnvironmentBuildError(f"{bundle.paths.root}: missing environment/Dockerfile")
        instructions = df.parse_dockerfile(bundle.paths.dockerfile.read_text())
        root = Path(tempfile.mkdtemp(prefix=f"envpipeline-local-{uuid.uuid4().hex[:6]}-"))
        os.chmod(root, 0o700)
        for name in iso.MOUNTS:
            (root / name).mkdir()
            os.chown(root / name, self.uid, self.gid)
        for name in ("verifier", "agent"):
            (root / "logs" / name).mkdir()
            os.chown(root / "logs" / name, self.uid, self.gid)
        if isolation == "unshare":
            (root / "root").mkdir()
        try:
            session = LocalSession(root, isolation, limits, self.uid, self.gid)
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
        try:
            self._build(session, bundle, instructions)
        except BaseException:
            session.close()
            raise
        return session

    def _build(self, session: LocalSession, bundle: Bundle, instructions: list[df.Instruction]) -> None:
        """Replay the supported instructions in order inside the session."""
        budget = self.build_timeout_sec or bundle.config.environment.build_timeout_sec
        deadline = time.monotonic() + budget
        workdir = "/"
        args: dict[str, str] = {}
        froms = [i for i in instructions if i.keyword == "FROM"]
        if not froms or instructions[0].keyword not in ("FROM", "ARG"):
            raise df.build_error(
                instructions[0].line if instructions else 1, "the Dockerfile must start with FROM"
            )
        if len(froms) > 1:
            raise df.build_error(froms[1].line, "multi-stage builds are not supported locally")
        for step in instructions:
            variables = {**args, **session.env}
            if step.keyword not in df.SUPPORTED | df.IGNORED:
                raise df.build_error(step.line, f"{step.keyword} is not supported by the local sandbox")
            if step.keyword == "ARG":
                name, _, default = step.value.partition("=")
                args[name.strip()] = df.expand(default.strip().strip('"'), variables)
            if step.keyword in df.IGNORED:
                session.ignored.append((step.line, step.keyword))
            elif step.keyword == "FROM":
                words = [word for word in step.value.split() if not word.startswith("--")]
                session.base_image = df.expand(words[0], variables) if words else None
            elif step.keyword == "ENV":
                session.env.update(df.parse_env(step.value, step.line, variables))
            elif step.keyword == "WORKDIR":
                workdir = df.resolve_dir(df.expand(step.value, variables), workdir, step.line, BUILD_ROOTS)
                code, _, err = session._run_quietly(["mkdir", "-p", "--", workdir])
                if code != 0:
                    raise df.build_error(
                        step.line, f"WORKDIR {workdir}: {err.decode(errors='replace').strip()}"
                    )
            elif step.keyword in ("COPY", "ADD"):
                with tempfile.TemporaryFile() as archive:
                    target = df.pack_copy(
                        step, bundle.paths.environment, workdir, variables, archive, BUILD_ROOTS
                    )
                    try:
                        session.extract(archive, target)
                    except SandboxError as e:
                        raise df.build_error(step.line, str(e)) from e
            else:
                self._run_step(session, step, workdir, deadline, args)

    @staticmethod
    def _run_step(
        session: LocalSession, step: df.Instruction, workdir: str, deadline: float, args: dict[str, str]
    ) -> None:
        """One RUN inside the sandbox under the session limits and the remaining build time.

        As in Docker, ARG values are environment variables of RUN steps only (ENV wins over them).
        """
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise df.build_error(step.line, "the build timeout was reached")
        saved, session.env = session.env, {**args, **session.env}
        try:
            result = session.exec(df.run_command(step.value, step.line), remaining, workdir=workdir)
        finally:
            session.env = saved
        if result.timed_out:
            raise df.build_error(step.line, f"RUN exceeded the build timeout ({remaining:.0f} s left)")
        if result.exit_code != 0:
            tail = (result.stdout + result.stderr).strip()[-2000:]
            raise df.build_error(
                step.line, f"RUN failed with exit code {result.exit_code} (no network here): {tail}"
            )
