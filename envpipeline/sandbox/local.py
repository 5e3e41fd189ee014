"""The local backend: bubblewrap (or ``unshare`` namespaces) as root, for machines without Docker.

A session is a temp root holding ``app/ logs/ tests/ solution/ tmp/``, bind-mounted at ``/app``,
``/logs``, ``/tests``, ``/solution`` and ``/tmp`` (and ``/var/tmp``) of a sandbox whose other
paths are the base image's own tree, read-only (`envpipeline.sandbox.rootfs`: exported from
Docker or built by mmdebstrap, so ``python3``, pytest and the tools are the container's), plus a
private ``/proc`` and ``/dev``. Commands start from the image's ``ENV`` and ``WORKDIR``. Where no
tree exists the host's ``/usr``, ``/etc`` and ``/bin``, ``/lib``... stand in, and every session
says so in `LocalSession.notices` (which verdicts carry as reasons), naming what the host lacks.
A *keeper* process (``bwrap --die-with-parent`` in new mount, PID, net, IPC and UTS namespaces;
no user namespace) holds the namespaces for the life of the session, so
background processes and ``/tmp`` persist between commands as they do in a container. Each
`LocalSandbox` keeps one spare keeper over an empty root booting in the background, so `open`
does not wait for bubblewrap; no command has ever entered a spare.

Every command enters those namespaces and drops to an unprivileged uid/gid (65534) with no
groups, no capabilities and ``no_new_privs``, with a minimal environment (the operator's
variables never reach it) -- in one exec through the compiled helper of
`envpipeline.sandbox.enter`, or through ``prlimit`` -> ``nsenter`` -> ``setpriv`` -> ``env -i``
where no C compiler exists (``setpriv`` and ``env`` then run from the image's tree). Limits are rlimits set on the way in: CPU seconds, address space
(``memory_mb``), processes (``pids``; enforced because the uid is not root), file size and open
files. Where a cgroup hierarchy is writable (root; `envpipeline.sandbox.cgroups`), each session also
gets a cgroup of its own at its first command: ``memory_mb`` then bounds the whole session (not
each process) and ``pids`` its process count, and the per-uid process rlimit, which every local
session shares, is lifted so one session cannot use up another's forks; without cgroups the
rlimits alone apply. Output is drained from both pipes in one ``select`` loop and only the first
``output_bytes`` of each are kept. At the wall timeout ``kill -9 -1`` runs as the sandbox uid
inside the PID namespace (atomic against forks, so fork bombs and ``setsid`` escapees go too);
``close()`` kills the keeper, which takes the whole PID namespace with it, and removes the root.

Uploads, COPY/ADD and `read_file` work on the session folders from the host when
`envpipeline.sandbox.hostio` can prove that safe (descriptor-relative, ``O_NOFOLLOW``, new files
only, the sandbox user's own permissions); otherwise ``tar``/``head`` run inside the sandbox as
the sandbox user, so a planted symlink resolves inside and never redirects a host write or read.
The environment is prepared from ``environment/Dockerfile`` (see `envpipeline.sandbox.replay`).
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
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import IO, ClassVar, Literal

from envpipeline.errors import SandboxError
from envpipeline.models.bundle import Bundle
from envpipeline.sandbox import cgroups, disk_quota, hostio, ownership, replay
from envpipeline.sandbox import dockerfile as df
from envpipeline.sandbox import isolation as iso
from envpipeline.sandbox.base import ExecResult, Limits, Sandbox, SandboxSession
from envpipeline.sandbox.rootfs import (
    BASE_IMAGE_CONFIG,
    RootFilesystem,
    find_rootfs,
    from_notice,
    host_notice,
)

#: The unprivileged user every sandboxed process runs as (``nobody``).
SANDBOX_UID = 65534
SANDBOX_GID = 65534
#: Sandbox paths `upload` may write under.
UPLOAD_ROOTS = ("/solution", "/tests", "/app", "/logs")
#: The process rlimit of a command when the session's cgroup counts its processes instead: the
#: rlimit is per uid, and every local session runs as the same uid.
SHARED_UID_NPROC = 1 << 15
#: Largest file `read_file` returns (bytes).
READ_LIMIT = 64 * 1024 * 1024


class LocalSession(SandboxSession):
    """A live keeper process and the temp root of one bundle."""

    def __init__(
        self,
        root: Path,
        isolation: str,
        limits: Limits,
        uid: int,
        gid: int,
        rootfs: RootFilesystem | None = None,
    ) -> None:
        self.root, self.isolation, self.limits = root, isolation, limits
        self.uid, self.gid = uid, gid
        self.session_id = root.name
        #: the image's tree this session runs on (None: the host's /usr, said in `notices`)
        self.rootfs = rootfs
        image = rootfs.config if rootfs is not None else BASE_IMAGE_CONFIG
        #: the image's ENV, then the Dockerfile's (added to iso.BASE_ENV for every command)
        self.env: dict[str, str] = dict(image.env)
        #: the image's WORKDIR: where RUN steps start until the Dockerfile sets one
        self.workdir = image.workdir
        #: why this session may differ from a container of the image (carried into verdicts)
        self.notices = () if rootfs is not None else (host_notice(),)
        #: the image the Dockerfile names in FROM (the local sandbox runs the base image's tree)
        self.base_image: str | None = None
        #: (line, keyword) of instructions recorded but not executed
        self.ignored: list[tuple[int, str]] = []
        self._closed = False
        self._pid1: int | None = None
        #: the size of the session's own disk volume (`disk_quota`; None: the host's temp folder)
        self.storage_mb: int | None = None
        #: the session's cgroup (memory and processes for the whole session), made at the first command
        self._cgroup: cgroups.SessionCgroup | None = None
        self._cgroup_made = False
        #: run once right after the first command starts (the sandbox prepares its next spare)
        self.while_first_command: Callable[[], None] | None = None
        info_read, info_write = os.pipe() if isolation == "bwrap" else (None, None)
        try:
            self._keeper = subprocess.Popen(
                iso.keeper_argv(isolation, root, info_write, rootfs.tree if rootfs is not None else None),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={"PATH": iso.BASE_ENV["PATH"]},
                start_new_session=True,
                pass_fds=() if info_write is None else (info_write,),
            )
        except BaseException:
            for fd in (info_read, info_write):
                if fd is not None:
                    os.close(fd)
            raise
        finally:
            if info_write is not None:
                os.close(info_write)
        self._info = info_read
        self._finalizer = weakref.finalize(self, iso.stop_keeper, self._keeper, None, root, info_read)

    def _wait_ready(self, timeout: float = 20.0) -> int:
        """Wait for the keeper's "ready" (once; the keeper boots while the host prepares files) and
        return the namespace's PID 1 (bwrap reports it on its info fd; else the keeper's child)."""
        if self._pid1 is not None:
            return self._pid1
        assert self._keeper.stdout is not None
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(self._keeper.stdout, selectors.EVENT_READ)
            ready = selector.select(timeout) and self._keeper.stdout.readline().strip() == b"ready"
        pid1 = None
        if ready and self._info is not None:
            pid1 = iso.read_child_pid(self._info, deadline)
        elif ready:
            pid1 = next(iter(iso.children(self._keeper.pid)), None)
        if pid1 is None:
            self._keeper.kill()
            _, err = self._keeper.communicate(timeout=30)
            self.close()
            raise SandboxError(
                f"{self.isolation} sandbox did not start: {err.decode(errors='replace').strip()[-1000:]}"
            )
        self._pid1 = pid1
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, iso.stop_keeper, self._keeper, pid1, self.root, self._info)
        return pid1

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
        pid1 = self._wait_ready()
        if self._keeper.poll() is not None:
            raise SandboxError(
                f"session {self.session_id}: the sandbox is gone (exit {self._keeper.returncode})"
            )
        group = self.cgroup()
        # with a cgroup counting this session's processes, the per-uid process rlimit (shared by every
        # local session) is lifted so a hostile neighbour cannot use up this session's forks
        limits = self.limits if group is None else self.limits.model_copy(update={"pids": SHARED_UID_NPROC})
        command, env = iso.enter_command(pid1, self.uid, self.gid, self.env, workdir, limits, timeout)
        return subprocess.Popen(
            cgroups.join_argv(group, command + argv),
            stdin=stdin if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
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
        hook, self.while_first_command = self.while_first_command, None
        if hook is not None:
            with contextlib.suppress(Exception):
                hook()
        deadline, timed_out = started + seconds, False
        try:
            out, err, truncated, timed_out = iso.collect_output(process, deadline, self.limits.output_bytes)
            if not timed_out:
                # the pipes can close before the command exits (or before nsenter has reaped it)
                timed_out = not iso.wait_exit(process, max(deadline - time.monotonic(), 0.0) + 0.05)
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

    def clear(self, path: str) -> None:
        """Empty a folder of the session from the host (as root: modes the agent set do not stop it).

        Every path component below the mount that is a link or a file is removed, never followed.
        """
        target = os.path.normpath(path)
        mount = next(
            (name for name, where in iso.MOUNTS.items() if target == where or target.startswith(where + "/")),
            None,
        )
        if not path.startswith("/") or mount is None or mount == "tmp":
            raise SandboxError(f"clear needs a folder under {', '.join(UPLOAD_ROOTS)}: {path}")
        folder = self.root / mount
        for part in Path(os.path.relpath(target, iso.MOUNTS[mount])).parts:
            if part == ".":
                continue
            folder = folder / part
            if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
                folder.unlink()
        if folder.is_dir():
            _remove_contents(folder)
        folder.mkdir(parents=True, exist_ok=True)
        for made in [folder, *folder.parents]:
            if made == self.root:
                break
            os.chown(made, self.uid, self.gid, follow_symlinks=False)
            os.chmod(made, 0o755)

    def empty(self, *folders: str) -> None:
        """`SandboxSession.empty` from the host, as root, for the session's own folders (``/app``,
        ``/tmp``...: links inside are removed, never followed; other paths go to the sandbox)."""
        if self._closed:
            raise SandboxError(f"session {self.session_id} is closed")
        mounts = {where: name for name, where in iso.MOUNTS.items()}
        inside = [folder for folder in folders if os.path.normpath(folder) not in mounts]
        for folder in folders:
            name = mounts.get(os.path.normpath(folder))
            if name is None:
                continue
            try:
                _remove_contents(self.root / name)
            except OSError as e:  # e.g. a folder a sandbox process replaced by a link meanwhile
                raise SandboxError(f"cannot empty {folder}: {e}") from e
        if inside:
            super().empty(*inside)

    def make_read_only(self, path: str) -> None:
        """Chown a session folder's tree to root and drop every write bit, from the host (links are
        changed themselves, never followed)."""
        target = os.path.normpath(path)
        mount = next((name for name, where in iso.MOUNTS.items() if target == where), None)
        if mount is None or mount == "tmp":
            raise SandboxError(f"make_read_only needs one of {', '.join(UPLOAD_ROOTS)}: {path}")
        folder = self.root / mount
        for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
            for name in [*dirnames, *filenames]:
                entry = os.path.join(dirpath, name)
                os.chown(entry, 0, 0, follow_symlinks=False)
                if not os.path.islink(entry):
                    os.chmod(entry, os.lstat(entry).st_mode & 0o555)
        os.chown(folder, 0, 0)
        os.chmod(folder, 0o555)

    def extract(self, archive: IO[bytes], directory: str) -> None:
        """Unpack a tar stream into a sandbox directory as the sandbox user would (symlinks resolve
        inside): from the host when `hostio` finds that safe, else by ``tar`` inside the sandbox."""
        with contextlib.suppress(hostio.Unsafe):
            return hostio.extract(archive, self.root, iso.MOUNTS, directory, self.uid, self.gid)
        archive.seek(0)
        script = 'mkdir -p -- "$1" && exec tar -x --no-same-owner -C "$1" -f -'
        code, _, err = self._run_quietly(["/bin/sh", "-c", script, "extract", directory], stdin=archive)
        if code != 0:
            raise SandboxError(
                f"cannot unpack into {directory}: {err.decode(errors='replace').strip()[-1000:]}"
            )

    def makedirs(self, directory: str) -> None:
        """``mkdir -p`` as the sandbox user (an empty archive unpacked there)."""
        with tempfile.TemporaryFile() as archive:
            tarfile.open(fileobj=archive, mode="w").close()
            self.extract(archive, directory)

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
        if self._closed:
            raise SandboxError(f"session {self.session_id} is closed")
        with contextlib.suppress(hostio.Unsafe):
            return hostio.read(self.root, iso.MOUNTS, path, self.uid, self.gid, READ_LIMIT)
        script = f'test -f "$1" || exit 3; exec head -c {READ_LIMIT} -- "$1"'
        code, out, err = self._run_quietly(["/bin/sh", "-c", script, "read_file", path], timeout=120)
        if code == 3:
            return None
        if code != 0:
            raise SandboxError(f"cannot read {path}: {err.decode(errors='replace').strip()}")
        return out

    def pack(self, directory: str) -> bytes:
        """`SandboxSession.pack`, read from the host when `hostio` finds that safe (no process in
        the sandbox: two launches fewer, the ``tar`` and the ``rm``), else packed inside."""
        if self._closed:
            raise SandboxError(f"session {self.session_id} is closed")
        with contextlib.suppress(hostio.Unsafe):
            return hostio.pack(self.root, iso.MOUNTS, directory, self.uid, self.gid, READ_LIMIT)
        return super().pack(directory)

    def cgroup(self) -> cgroups.SessionCgroup | None:
        """The session's cgroup with its current limits (made once; None where cgroups are not
        writable: then memory is limited per process and processes per uid, by rlimits)."""
        if not self._cgroup_made:
            self._cgroup_made = True
            self._cgroup = cgroups.SessionCgroup.create(self.session_id, self.limits)
            if self._cgroup is not None:
                weakref.finalize(self, self._cgroup.remove)
        return self._cgroup

    def close(self) -> None:
        """Kill the sandbox (its whole PID namespace), remove the temp root and the cgroup (idempotent)."""
        if not self._closed:
            self._closed = True
            self._finalizer()
            if self._cgroup is not None:
                self._cgroup.remove()


def _remove_contents(folder: Path) -> None:
    """Remove everything inside a host folder of a session; links are removed, never followed
    (`shutil.rmtree` works through descriptors and refuses a folder swapped for a link meanwhile)."""
    for child in os.scandir(folder):
        if child.is_dir(follow_symlinks=False):
            shutil.rmtree(child.path)
        else:
            os.unlink(child.path)


class LocalSandbox(Sandbox):
    """Prepares bundles from their Dockerfile inside bubblewrap/namespaces and runs sessions there."""

    backend: ClassVar[str] = "local"

    def __init__(
        self,
        build_timeout_sec: float | None = None,
        uid: int = SANDBOX_UID,
        gid: int = SANDBOX_GID,
        isolation: str | None = None,
        prestart: bool = True,
        rootfs: RootFilesystem | Literal["auto", "host"] = "auto",
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
        #: keep one fresh keeper booting in the background for the next `open` (hides its start-up)
        self.prestart = prestart
        #: the image tree sessions run on: found (or exported) at the first `open` when "auto"
        self.rootfs = rootfs
        self._spare: LocalSession | None = None
        self._lock = threading.Lock()

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
        if bundle.dockerfile_text is None and not bundle.paths.dockerfile.is_file():
            raise df.EnvironmentBuildError(f"{bundle.paths.root}: missing environment/Dockerfile")
        instructions = df.parse_dockerfile(bundle.dockerfile_text or bundle.paths.dockerfile.read_text())
        session = self._take_session(isolation, limits, self.image_tree())
        try:
            budget = self.build_timeout_sec or bundle.config.environment.build_timeout_sec
            replay.replay(session, bundle, instructions, budget)
            runs_on = session.rootfs.config.image if session.rootfs is not None else BASE_IMAGE_CONFIG.image
            session.notices += from_notice(session.base_image, runs_on)
            session._wait_ready()
        except BaseException:
            session.close()
            raise
        return session

    def image_tree(self) -> RootFilesystem | None:
        """The base image's tree (found, or exported from Docker, once), or None for the host's /usr."""
        with self._lock:
            if self.rootfs == "auto":
                self.rootfs = find_rootfs() or "host"
            return self.rootfs if isinstance(self.rootfs, RootFilesystem) else None

    def close(self) -> None:
        """Stop the pre-started spare keeper, if any (open sessions are not affected)."""
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is not None:
            spare.close()

    def _new_session(self, isolation: str, limits: Limits, rootfs: RootFilesystem | None) -> LocalSession:
        """A fresh temp root and a keeper starting on it (nothing has run in it yet)."""
        root = Path(tempfile.mkdtemp(prefix=ownership.local_root_prefix()))
        try:
            quota = disk_quota.mount_volume(root, limits.storage_mb)
            os.chmod(root, 0o700)
            for name in (*iso.MOUNTS, "logs/verifier", "logs/agent"):
                (root / name).mkdir()
                os.chown(root / name, self.uid, self.gid)
            if isolation == "unshare":
                (root / "root").mkdir()
            session = LocalSession(root, isolation, limits, self.uid, self.gid, rootfs)
            session.storage_mb = limits.storage_mb if quota else None
            return session
        except BaseException:
            disk_quota.release(root)
            shutil.rmtree(root, ignore_errors=True)
            raise

    def _take_session(self, isolation: str, limits: Limits, rootfs: RootFilesystem | None) -> LocalSession:
        """The spare session when it is unused and alive, else a new one; then start the next spare.

        A spare is a keeper over an empty root that no command has entered, so handing it to the
        next bundle is the same as starting a new one, minus the wait for bubblewrap.
        """
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is not None and (
            spare.isolation != isolation
            or spare.rootfs != rootfs
            or spare._keeper.poll() is not None
            or spare.storage_mb not in (None, limits.storage_mb)  # its disk volume has another size
        ):
            spare.close()
            spare = None
        session = spare or self._new_session(isolation, limits, rootfs)
        session.limits = limits
        if self.prestart and isolation == "bwrap":  # bwrap's info fd finds a spare's PID 1 at any time
            # while the session's first command runs, in the caller's thread (a keeper's
            # parent-death signal follows the thread that forked it, so no helper thread)
            session.while_first_command = lambda: self._refill(isolation, rootfs)
        return session

    def _refill(self, isolation: str, rootfs: RootFilesystem | None) -> None:
        """Start the next spare session (a failure only means the next `open` starts its own)."""
        try:
            fresh = self._new_session(isolation, Limits(), rootfs)
        except (OSError, SandboxError):
            return
        with self._lock:
            displaced, self._spare = self._spare, fresh
        if displaced is not None:
            displaced.close()
