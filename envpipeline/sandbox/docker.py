"""The Docker backend: one container per session, built from the bundle's ``environment/``.

`DockerSandbox.open` builds ``environment/Dockerfile`` (or the bundle's resolved Dockerfile text,
`Bundle.dockerfile_text`, given on stdin) into an image tagged by the content hash of the folder,
the Dockerfile built and the base image id (``envpipeline-env:<sha256[:16]>``; an existing tag is
reused, so a bundle is built once; the build is held to the operator's ceiling -- memory, CPU,
processes, time, image size: `envpipeline.sandbox.build_limits`), then starts a container with no
network and CPU/memory/pids/file-size/open-file limits. The *build* reaches the package registries with the
host's pip settings as build args (`envpipeline.sandbox.registries`; ``ENVPIPELINE_BUILD_NETWORK=none``
builds offline); agent and verifier containers never have a network.

Sessions talk to the Docker Engine API (`envpipeline.sandbox.docker_engine`): creating, starting,
exec, copying and removing are HTTP requests on the engine's socket, not ``docker`` CLI processes
(only an image build, once per environment, and the `DockerSession.inspect` diagnostic run the
CLI). The base image id is looked up once per process. After each `open` the sandbox starts a
*warm spare*: a container of the same image and limits, so the next session of that bundle does
not wait for create + start (`DockerSandbox.close`, a dropped sandbox or the process's exit
removes an unused spare; the spare carries the same labels as any session, so the reaper finds it).

Commands run through an exec under ``timeout -s KILL`` with a host-side backstop; at a
timeout every process of the container except PID 1 is killed. The operator's environment never
reaches the container (an exec gets only the image's ``ENV``). `close` removes the
container; a finalizer removes it too if a session is dropped unclosed; a container left by a
killed process carries its owner and expiry labels, so `envpipeline.sandbox.reaper` removes it at
the next run's start (`prune_sessions` removes every session container, whoever owns it).

PID 1 is a tiny bash loop around ``sleep`` rather than a bare ``sleep infinity``: bash reaps the
orphans it adopts, so background processes of many commands do not pile up as zombies against
the pids limit, and a ``kill -9 -1`` that takes its ``sleep`` child just starts a new one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import posixpath
import re
import stat
import subprocess
import tempfile
import threading
import time
import uuid
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import ClassVar

from envpipeline.errors import MissingExtraError, SandboxError

try:
    from docker.errors import NotFound
    from docker.types import Mount, Ulimit
except ImportError as missing:
    raise MissingExtraError("sandbox", missing, needed_by=__name__) from missing
from envpipeline.models.bundle import Bundle
from envpipeline.sandbox import build_limits, docker_copy, docker_engine, docker_volume, ownership, registries
from envpipeline.sandbox.base import (
    BASE_IMAGE,
    EnvironmentBuildError,
    ExecResult,
    Limits,
    Sandbox,
    SandboxSession,
)
from envpipeline.sandbox.ceiling import OperatorCeiling, operator_ceiling
from envpipeline.sandbox.checked import OUTPUT_TRIES, end_marker
from envpipeline.sandbox.docker_cli import CLI_ENV_KEYS, cli_env, docker

__all__ = ["CLI_ENV_KEYS", "DockerSandbox", "DockerSession", "cli_env", "docker"]

#: Repository of the per-environment images.
IMAGE_REPOSITORY = "envpipeline-env"
#: Label carried by every session container (value: the session id).
SESSION_LABEL = "envpipeline.session"
#: Tries of `DockerSession.kill_all` (a kill that cannot start under a full pids limit is retried).
KILL_ALL_ATTEMPTS = 10
#: Kills every process but PID 1 and itself (the shell's builtin ``kill``), then waits until each
#: process that existed before the kill is gone or a zombie: SIGKILL is only queued, and a process
#: inside a slow system call (an ``open`` of a reward file on a busy overlay) still finishes that
#: call before it dies. Exit 0: all gone; 2: survivors (their pids on stderr) after about 5 s.
KILL_ALL_SCRIPT = (
    # builtins only until the kill: under a fork bomb's full pids limit no second process starts
    "set -- /proc/[0-9]*; kill -9 -1 2>/dev/null; tries=0; "
    "while :; do alive=''; "
    'for d in "$@"; do p=${d#/proc/}; [ "$p" = 1 ] || [ "$p" = $$ ] && continue; '
    'read -r stat 2>/dev/null < "$d/stat" || continue; state=${stat##*)}; state=${state# }; '
    'case ${state%% *} in Z|X|"") ;; *) alive="$alive $p";; esac; done; '
    '[ -z "$alive" ] && exit 0; tries=$((tries + 1)); '
    '[ $tries -ge 500 ] && { echo "still running:$alive" >&2; exit 2; }; '
    "kill -9 -1 2>/dev/null; sleep 0.01; done"
)
#: Label carried by every environment image (value: the full content digest).
DIGEST_LABEL = "envpipeline.env.digest"
#: Sandbox paths `upload` may write under.
UPLOAD_ROOTS = ("/solution", "/tests", "/app", "/logs")
#: Folders every session has before the first command.
SESSION_DIRS = ("/app", "/logs/verifier", "/logs/agent", "/tests", "/solution")
#: PID 1 of a session: keeps the container alive and reaps adopted orphans.
KEEPALIVE = 'trap "exit 0" TERM; while :; do sleep 86400 & wait; done'
#: Capabilities dropped on top of Docker's defaults (no raw sockets, device nodes, chroot...).
DROPPED_CAPS = ("NET_RAW", "MKNOD", "AUDIT_WRITE", "SYS_CHROOT", "SETFCAP", "NET_BIND_SERVICE")
#: Empties a folder: every component that is a link or a file is removed first, never followed.
CLEAR_SCRIPT = (
    'd=""; for c in $(echo "${1#/}" | tr / " "); do d="$d/$c"; '
    'if [ -L "$d" ] || { [ -e "$d" ] && [ ! -d "$d" ]; }; then rm -f -- "$d"; fi; done; '
    # a mount point (the /logs tmpfs) cannot be removed: its contents are
    '{ rm -rf -- "$1" 2>/dev/null || find "$1" -mindepth 1 -delete; } && mkdir -p -- "$1" && chmod 0777 -- "$1"'
)
#: Largest file `read_file` returns (bytes).
READ_LIMIT = 64 * 1024 * 1024
#: Seconds the host waits beyond a command's own timeout before cutting the exec's stream itself.
BACKSTOP_GRACE_SEC = 10.0
#: ANSI colour sequences the classic builder writes around RUN output.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")

#: Output kept of an internal command (mkdir, chmod, kill...).
INTERNAL_OUTPUT = 1 << 20

_tag_locks: dict[str, threading.Lock] = {}
_tag_locks_guard = threading.Lock()
_base_image_ids: dict[str, str] = {}


def environment_digest(folder: Path) -> str:
    """sha256 over the folder's relative paths, file types, permission bits and bytes."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*"), key=lambda p: p.relative_to(folder).as_posix()):
        info = path.lstat()
        relative = path.relative_to(folder).as_posix()
        digest.update(f"{relative}\0{stat.S_IFMT(info.st_mode):o}\0{stat.S_IMODE(info.st_mode):o}\0".encode())
        if stat.S_ISLNK(info.st_mode):
            digest.update(os.readlink(path).encode())
        elif stat.S_ISREG(info.st_mode):
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        digest.update(b"\n")
    return digest.hexdigest()


def base_image_id(refresh: bool = False) -> str:
    """The id of the offline base image ("" when it is missing), looked up once per process
    (`refresh` looks again, e.g. after ``make base-image`` rebuilt it in a long-lived process)."""
    if not refresh and BASE_IMAGE in _base_image_ids:
        return _base_image_ids[BASE_IMAGE]
    found = _image_id(BASE_IMAGE)
    if found:  # a missing base image is looked up again next time
        _base_image_ids[BASE_IMAGE] = found
    return found


def _image_id(image: str) -> str:
    """The engine's id of `image` ("" when it has none)."""
    control = docker_engine.engine()
    try:
        return str(control.inspect_image(image)["Id"])
    except NotFound:
        return ""
    except docker_engine.ENGINE_ERRORS as e:
        raise SandboxError(f"docker image inspect {image} failed: {e}") from e


def image_digest(folder: Path) -> str:
    """The environment folder's digest combined with the base image id.

    A rebuilt base image therefore yields new environment tags, so cached environments built on
    the old base are not reused (oracle rot from a changed base shows up on re-verification).
    """
    return hashlib.sha256(f"{environment_digest(folder)}:{base_image_id()}".encode()).hexdigest()


def image_tag(folder: Path) -> str:
    """The content-addressed tag of an environment folder on the current base image."""
    return f"{IMAGE_REPOSITORY}:{image_digest(folder)[:16]}"


def image_exists(tag: str) -> bool:
    """Whether the engine has an image with this tag."""
    return _image_id(tag) != ""


@cache
def cgroup_driver() -> str:
    """The engine's cgroup driver (``cgroupfs`` or ``systemd``; "" when it does not say)."""
    with contextlib.suppress(SandboxError):
        return str(docker_engine.call(lambda: docker_engine.engine().info()).get("CgroupDriver") or "")
    return ""


def session_containers() -> list[str]:
    """Ids of every container (running or not) that carries the session label."""
    listed = docker_engine.call(
        lambda: docker_engine.engine().containers(all=True, filters={"label": SESSION_LABEL}), "docker ps"
    )
    return [str(found["Id"]) for found in listed]


def prune_sessions() -> int:
    """Remove every container left by a session (any process); returns how many were removed."""
    listed = session_containers()
    for container in listed:
        _remove_container(container)
    return len(listed)


def _remove_container(name: str, volume: str | None = None) -> None:
    """Remove a container and its /app volume, ignoring what is already gone (close, finalizer)."""
    with contextlib.suppress(SandboxError, *docker_engine.ENGINE_ERRORS):
        docker_engine.engine().remove_container(name, v=True, force=True)
    if volume is not None:
        docker_volume.remove_app_volume(volume)


def _inside(target: str, roots: tuple[str, ...]) -> bool:
    return any(target == root or target.startswith(root + "/") for root in roots)


class DockerSession(SandboxSession):
    """A running container for one bundle."""

    def __init__(
        self, container: str, session_id: str, image: str, limits: Limits, app_volume: str | None = None
    ) -> None:
        self.container = container
        self.session_id = session_id
        self.image = image
        self.limits = limits
        #: the named volume of /app holding its disk quota (`docker_volume`; None: no quota there)
        self.app_volume = app_volume
        self._closed = False
        self._finalizer = weakref.finalize(self, _remove_container, container, app_volume)

    def _check_open(self) -> None:
        if self._closed:
            raise SandboxError(f"session {self.session_id} is closed")

    def _internal(self, argv: list[str], what: str, timeout: float = 120.0) -> bytes:
        return docker_copy.exec_checked(self.container, argv, what, timeout)

    def upload(self, source: Path, destination: str) -> None:
        """Copy a folder's contents to `destination` (a file goes to ``destination/<name>``)."""
        self._check_open()
        target = posixpath.normpath(destination)
        if not destination.startswith("/") or not _inside(target, UPLOAD_ROOTS):
            raise SandboxError(f"upload destination must be under {', '.join(UPLOAD_ROOTS)}: {destination}")
        source = Path(source)
        if not source.exists():
            raise SandboxError(f"upload source does not exist: {source}")
        archive = docker_copy.pack(source)
        if _inside(target, docker_volume.TMPFS_FOLDERS):  # the archive API cannot write into a tmpfs
            docker_copy.put_staged(self.container, archive, target)
            return
        if target not in SESSION_DIRS:
            self._internal(["mkdir", "-p", "--", target], f"mkdir {target}")
        docker_copy.put(self.container, archive, target)

    def exec(self, command: str, timeout_sec: float, workdir: str = "/app") -> ExecResult:
        """Run `command` with bash in `workdir`; at the timeout kill every process but PID 1."""
        self._check_open()
        seconds = max(timeout_sec, 0.001)
        argv = ["timeout", "-s", "KILL", f"{seconds:.3f}", "bash", "-c", command]
        ran = docker_engine.run(
            self.container,
            argv,
            wait_sec=seconds + BACKSTOP_GRACE_SEC,
            limit=self.limits.output_bytes,
            workdir=workdir,
            on_cut=self.kill_all,
        )
        # timeout(1) signals its whole process group with KILL, itself included: status 137.
        timed_out = ran.cut or (ran.exit_code in (124, 137) and ran.duration_sec >= seconds)
        if timed_out and not ran.cut:
            self.kill_all()
        return ExecResult(
            exit_code=None if timed_out else ran.exit_code,
            stdout=ran.stdout.decode(errors="replace"),
            stderr=ran.stderr.decode(errors="replace"),
            timed_out=timed_out,
            truncated=ran.truncated,
            duration_sec=round(ran.duration_sec, 3),
        )

    def kill_all(self) -> None:
        """Kill every process of the container except PID 1 (setsid'd ones included) and return
        once they are gone; SandboxError when some survive every try."""
        if self._closed:
            return
        why = "the kill never started"
        # while a fork bomb still fills the pids limit, the kill itself may fail to start: try again
        for _ in range(KILL_ALL_ATTEMPTS):
            try:
                ran = docker_engine.run(
                    self.container, ["sh", "-c", KILL_ALL_SCRIPT], wait_sec=30, limit=INTERNAL_OUTPUT
                )
            except SandboxError as e:
                why = str(e)
            else:
                if ran.exit_code == 0:
                    return
                why = ran.stderr.decode(errors="replace").strip() or f"exit {ran.exit_code}"
            time.sleep(0.2)
        raise SandboxError(f"kill_all in {self.container}: {why}")

    def clear(self, path: str) -> None:
        """Remove `path` (links on the way removed, not followed) and make it again, empty."""
        self._check_open()
        target = posixpath.normpath(path)
        if not path.startswith("/") or not _inside(target, UPLOAD_ROOTS):
            raise SandboxError(f"clear needs a folder under {', '.join(UPLOAD_ROOTS)}: {path}")
        self._internal(["sh", "-c", CLEAR_SCRIPT, "clear", target], f"clear {target}")

    def make_read_only(self, path: str) -> None:
        """Chown the folder's tree to root and drop every write bit (the container's commands run
        as root, who is not stopped by modes: what keeps the tests intact on Docker is that every
        agent process is killed before they are uploaded)."""
        self._check_open()
        target = posixpath.normpath(path)
        if target not in UPLOAD_ROOTS:
            raise SandboxError(f"make_read_only needs one of {', '.join(UPLOAD_ROOTS)}: {path}")
        script = 'chown -hR 0:0 -- "$1" && chmod -R a-w -- "$1"'
        self._internal(["sh", "-c", script, "make_read_only", target], f"make_read_only {target}")

    def read_file(self, path: str) -> bytes | None:
        """The bytes of a regular file (first READ_LIMIT bytes), or None if there is none."""
        self._check_open()
        if not path.startswith("/"):
            raise SandboxError(f"read_file needs an absolute path: {path}")
        # the bytes, then an end marker: the exec stream can lose a short command's output under
        # load (`envpipeline.sandbox.checked`), and a lost reward must not read as an empty one
        script = f'test -f "$1" || exit 3; head -c {READ_LIMIT} -- "$1" || exit 4; printf %s "$2"'
        for _ in range(OUTPUT_TRIES):
            marker = end_marker()
            ran = docker_engine.run(
                self.container,
                ["sh", "-c", script, "read_file", path, marker],
                wait_sec=120,
                limit=READ_LIMIT + len(marker),
            )
            if ran.exit_code == 3:
                return None
            if ran.exit_code != 0:
                why = ran.stderr.decode(errors="replace").strip() or f"exit {ran.exit_code}"
                raise SandboxError(f"cannot read {path}: {why}")
            if ran.stdout.endswith(marker.encode()):
                return ran.stdout[: -len(marker)]
        raise SandboxError(
            f"cannot read {path}: its content was lost in the exec stream {OUTPUT_TRIES} times"
        )

    def running(self) -> bool:
        """Whether the container is still up (a spare may have been pruned meanwhile)."""
        try:
            state = docker_engine.call(lambda: docker_engine.engine().inspect_container(self.container))
        except SandboxError:
            return False
        return not self._closed and bool(state.get("State", {}).get("Running"))

    def inspect(self, template: str) -> str:
        """``docker inspect --format`` of the container (a diagnostic: runs the docker CLI)."""
        return docker(["inspect", "--format", template, self.container]).stdout.decode().strip()

    def close(self) -> None:
        """Remove the container and its anonymous volumes (idempotent)."""
        if not self._closed:
            self._closed = True
            self._finalizer()


def _close_quietly(spare: Future[DockerSession]) -> None:
    """Remove a spare once it is started (or do nothing if starting it failed)."""
    if spare.exception() is None:
        spare.result().close()


class DockerSandbox(Sandbox):
    """Builds environments into content-addressed images and runs sessions in containers."""

    backend: ClassVar[str] = "docker"

    def __init__(
        self,
        build_timeout_sec: float = 900.0,
        start_timeout_sec: float = 120.0,
        build_network: registries.BuildNetwork | None = None,
        ceiling: OperatorCeiling | None = None,
        warm_spare: bool = True,
    ) -> None:
        #: what a build may use (memory, CPUs, processes, image size): the operator's ceiling
        self.ceiling = ceiling or operator_ceiling()
        self.build_timeout_sec = min(build_timeout_sec, self.ceiling.timeout_sec)
        self.start_timeout_sec = start_timeout_sec
        #: what builds reach (default: `registries.BUILD_NETWORK_ENV`, else the package registries)
        self.build_network = build_network or registries.build_network_from_env()
        #: how many images this instance built (a cache hit does not count)
        self.builds = 0
        #: whether each `open` starts the next session's container ahead (`_prepare_spare`)
        self.warm_spare = warm_spare
        #: how many sessions were served by a spare started ahead
        self.spares_used = 0
        self._spare: tuple[tuple[str, str], Future[DockerSession]] | None = None
        self._spare_lock = threading.Lock()
        self._starter: ThreadPoolExecutor | None = None

    @classmethod
    def available(cls) -> bool:
        """Whether the engine answers within 3 s."""
        return docker_engine.ping(3.0)

    @classmethod
    def provides_image(cls, image: str) -> bool:
        """Whether the engine has `image` (an operator loaded or built it), so it runs as is."""
        return image_exists(image)

    def build_args(self) -> dict[str, str]:
        """The build args of a registry build (none when builds are offline)."""
        if self.build_network is registries.BuildNetwork.NONE:
            return {}
        return registries.registry_build_args()

    def ensure_image(self, bundle: Bundle) -> str:
        """Build the bundle's Dockerfile unless its content-addressed tag exists; return the tag."""
        folder = bundle.paths.environment
        if bundle.dockerfile_text is None and not bundle.paths.dockerfile.is_file():
            raise EnvironmentBuildError(f"{bundle.paths.root}: missing environment/Dockerfile")
        as_written = bundle.paths.dockerfile.read_text() if bundle.paths.dockerfile.is_file() else None
        build_args = self.build_args()
        text = bundle.dockerfile_text or as_written or ""
        if registries.PIP_COMMAND.search(text):  # only pip reads them; other builds keep their tag
            text = registries.with_build_args(text, build_args)
        digest = image_digest(folder)
        if text != as_written:  # the file's own build keeps `image_tag(folder)`
            text_digest = hashlib.sha256(text.encode()).hexdigest()
            digest = hashlib.sha256(f"{digest}:{text_digest}".encode()).hexdigest()
        tag = f"{IMAGE_REPOSITORY}:{digest[:16]}"
        with _tag_locks_guard:
            lock = _tag_locks.setdefault(tag, threading.Lock())
        with lock:
            if image_exists(tag):
                return tag
            self._build(folder, text, build_args, tag, digest, bundle.name)
        return tag

    def _build(
        self, folder: Path, text: str, build_args: dict[str, str], tag: str, digest: str, name: str
    ) -> None:
        """``docker build`` of `text` (on stdin) in the context `folder` (an empty one if missing)."""
        # `-f -` reads the Dockerfile from stdin and keeps the folder as context; `--network default`
        # is the bridge network (https://docs.docker.com/reference/cli/docker/buildx/build/#file,
        # #network; the classic builder takes both, checked in tests/docker/test_docker_sandbox.py).
        args = ["build", "--network", self.build_network.docker_network, "--rm", "--force-rm", "--pull=false"]
        args += [arg for k, v in sorted(build_args.items()) for arg in ("--build-arg", f"{k}={v}")]
        args += ["--label", f"{DIGEST_LABEL}={digest}", "-t", tag, "-f", "-"]
        args += build_limits.build_limit_args(self.ceiling, cgroup_driver())
        with contextlib.ExitStack() as stack:
            context = folder if folder.is_dir() else Path(stack.enter_context(tempfile.TemporaryDirectory()))
            done = self._run_build([*args, str(context)], text, name)
        if done.returncode != 0:
            lines = _ANSI.sub("", done.stdout.decode(errors="replace")).strip().splitlines()
            tail = "\n".join(lines[-40:])
            reach = (
                "builds reach only the package registries"
                if self.build_network is registries.BuildNetwork.REGISTRIES
                else f"builds run without network ({registries.BUILD_NETWORK_ENV}=none)"
            )
            raise EnvironmentBuildError(f"{name}: docker build failed ({done.returncode}; {reach}):\n{tail}")
        self.builds += 1
        control = docker_engine.engine()
        size = docker_engine.call(lambda: control.inspect_image(tag), "docker image inspect").get("Size")
        too_large = build_limits.image_size_problem(int(size or 0), self.ceiling)
        if too_large:
            with contextlib.suppress(*docker_engine.ENGINE_ERRORS):
                control.remove_image(tag, force=True)
            raise EnvironmentBuildError(f"{name}: {too_large}")

    def _run_build(self, args: list[str], text: str, name: str) -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run(
                ["docker", *args],
                input=text.encode(),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                timeout=self.build_timeout_sec,
                env=cli_env(),
            )
        except FileNotFoundError as e:
            raise SandboxError("the docker CLI is not installed") from e
        except subprocess.TimeoutExpired as e:
            raise EnvironmentBuildError(f"{name}: build exceeded {self.build_timeout_sec:.0f} s") from e

    def open(self, bundle: Bundle, limits: Limits) -> DockerSession:
        """Build (or reuse) the image and start a limited, network-less container (or take the
        spare started ahead for this image and these limits); then start the next spare."""
        image = self.ensure_image(bundle)
        key = (image, limits.model_dump_json())
        session = self._take_spare(key)
        if session is None:
            session = self.start_session(image, limits)
        else:
            self.spares_used += 1
        if self.warm_spare:
            self._prepare_spare(key, image, limits)
        return session

    def start_session(self, image: str, limits: Limits) -> DockerSession:
        """Create and start a container of `image` under `limits` (engine API requests only)."""
        session_id = uuid.uuid4().hex[:12]
        container = f"envpipeline-{session_id}"
        memory = f"{limits.memory_mb}m"
        file_size = limits.file_size_mb * 1024 * 1024
        labels = {
            SESSION_LABEL: session_id,
            ownership.OWNER_LABEL: ownership.owner(),
            ownership.EXPIRES_LABEL: ownership.expiry(),
        }
        app_volume = docker_volume.create_app_volume(session_id, limits.storage_mb)
        control = docker_engine.engine()
        try:
            host_config = control.create_host_config(
                network_mode="none",
                nano_cpus=round(limits.cpus * 1e9),
                mem_limit=memory,
                memswap_limit=memory,
                pids_limit=limits.pids,
                ulimits=[
                    Ulimit(name="fsize", soft=file_size, hard=file_size),
                    Ulimit(name="nofile", soft=1024, hard=1024),
                ],
                security_opt=["no-new-privileges"],
                cap_drop=list(DROPPED_CAPS),
                mounts=[Mount("/app", app_volume, type="volume")] if app_volume is not None else None,
                tmpfs=docker_volume.tmpfs_mounts(limits.storage_mb),
            )
            docker_engine.call(
                lambda: control.create_container(
                    image,
                    command=["-c", KEEPALIVE],
                    entrypoint=["bash"],
                    name=container,
                    labels=labels,
                    host_config=host_config,
                ),
                "docker create",
            )
            docker_engine.call(lambda: control.start(container), "docker start")
        except (SandboxError, *docker_engine.ENGINE_ERRORS) as e:
            _remove_container(container, app_volume)
            raise e if isinstance(e, SandboxError) else SandboxError(f"docker create failed: {e}") from e
        session = DockerSession(container, session_id, image, limits, app_volume)
        try:
            if docker_volume.image_has_files_under_tmpfs(image):
                docker_copy.copy_image_folders(image, container, docker_volume.TMPFS_FOLDERS)
            docker_copy.exec_checked(
                container, ["mkdir", "-p", *SESSION_DIRS], "mkdir of the session folders"
            )
        except SandboxError:
            session.close()
            raise
        return session

    def _take_spare(self, key: tuple[str, str]) -> DockerSession | None:
        """The spare started for `key`, if there is one and it is up; a spare for another image
        or other limits is removed."""
        with self._spare_lock:
            spare, self._spare = self._spare, None
        if spare is None:
            return None
        spare_key, started = spare
        if spare_key != key:
            started.add_done_callback(_close_quietly)
            return None
        try:
            session = started.result(timeout=self.start_timeout_sec)
        except Exception:  # starting it failed or hangs: open a session the plain way
            started.add_done_callback(_close_quietly)
            return None
        if not session.running():
            session.close()
            return None
        return session

    def _prepare_spare(self, key: tuple[str, str], image: str, limits: Limits) -> None:
        """Start a container for the next `open` of `key` in the background."""
        with self._spare_lock:
            if self._spare is not None:  # another thread's spare: keep the one already there
                return
            if self._starter is None:
                self._starter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="docker-spare")
            self._spare = (key, self._starter.submit(self.start_session, image, limits))

    def close(self) -> None:
        """Remove the spare started ahead, if any (sessions already opened are the caller's)."""
        with self._spare_lock:
            spare, self._spare = self._spare, None
        if spare is not None:
            with contextlib.suppress(Exception):
                _close_quietly(spare[1])
