"""The Docker backend: one container per session, built from the bundle's ``environment/``.

`DockerSandbox.open` builds ``environment/Dockerfile`` (or the bundle's resolved Dockerfile text,
`Bundle.dockerfile_text`, given on stdin) into an image tagged by the content hash of the folder,
the Dockerfile built and the base image id (``envpipeline-env:<sha256[:16]>``; an existing tag is
reused, so a bundle is built once; the build is held to the operator's ceiling -- memory, CPU,
processes, time, image size: `envpipeline.sandbox.build_limits`), then starts a container with no
network and CPU/memory/pids/file-size/open-file limits. The *build* reaches the package registries with the
host's pip settings as build args (`envpipeline.sandbox.registries`; ``ENVPIPELINE_BUILD_NETWORK=none``
builds offline); agent and verifier containers never have a network.
Commands run through ``docker exec`` under ``timeout -s KILL`` with a host-side backstop; at a
timeout every process of the container except PID 1 is killed. The operator's environment never
reaches the container (``docker exec`` passes only the image's ``ENV``). `close` removes the
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
from functools import cache
from pathlib import Path
from typing import IO, ClassVar

from envpipeline.errors import SandboxError
from envpipeline.models.bundle import Bundle
from envpipeline.sandbox import build_limits, docker_copy, docker_volume, ownership, registries
from envpipeline.sandbox.base import (
    BASE_IMAGE,
    EnvironmentBuildError,
    ExecResult,
    Limits,
    Sandbox,
    SandboxSession,
)
from envpipeline.sandbox.ceiling import OperatorCeiling, operator_ceiling
from envpipeline.sandbox.docker_cli import CLI_ENV_KEYS, cli_env, docker

__all__ = ["CLI_ENV_KEYS", "DockerSandbox", "DockerSession", "cli_env", "docker"]

#: Repository of the per-environment images.
IMAGE_REPOSITORY = "envpipeline-env"
#: Label carried by every session container (value: the session id).
SESSION_LABEL = "envpipeline.session"
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
#: Seconds the host waits beyond a command's own timeout before killing `docker exec` itself.
BACKSTOP_GRACE_SEC = 10.0
#: ANSI colour sequences the classic builder writes around RUN output.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")

_tag_locks: dict[str, threading.Lock] = {}
_tag_locks_guard = threading.Lock()


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


def base_image_id() -> str:
    """The id of the offline base image ("" when it is missing)."""
    probe = docker(["image", "inspect", "--format", "{{.Id}}", BASE_IMAGE], check=False)
    return probe.stdout.decode().strip() if probe.returncode == 0 else ""


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
    return docker(["image", "inspect", "--format", "{{.Id}}", tag], check=False).returncode == 0


@cache
def cgroup_driver() -> str:
    """The engine's cgroup driver (``cgroupfs`` or ``systemd``; "" when it does not say)."""
    done = docker(["info", "--format", "{{.CgroupDriver}}"], timeout=30, check=False)
    return done.stdout.decode().strip() if done.returncode == 0 else ""


def prune_sessions() -> int:
    """Remove every container left by a session (any process); returns how many were removed."""
    listed = docker(["ps", "-aq", "--filter", f"label={SESSION_LABEL}"]).stdout.decode().split()
    if listed:
        docker(["rm", "-f", "-v", *listed], check=False)
    return len(listed)


def _remove_container(name: str, volume: str | None = None) -> None:
    """Remove a container and its /app volume, ignoring what is already gone (close, finalizer)."""
    with contextlib.suppress(SandboxError):
        docker(["rm", "-f", "-v", name], timeout=60, check=False)
    if volume is not None:
        docker_volume.remove_app_volume(volume)


class _Capped:
    """Drains a pipe in a thread, keeping the first `limit` bytes."""

    def __init__(self, pipe: IO[bytes], limit: int) -> None:
        self.data = bytearray()
        self.truncated = False
        self._pipe, self._limit = pipe, limit
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while chunk := self._pipe.read1(65536):  # type: ignore[attr-defined]
            room = self._limit - len(self.data)
            if len(chunk) > room:
                self.truncated = True
            if room > 0:
                self.data += chunk[:room]

    def text(self, timeout: float) -> str:
        self._thread.join(timeout)
        return self.data.decode(errors="replace")


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

    def upload(self, source: Path, destination: str) -> None:
        """Copy a folder's contents to `destination` (a file goes to ``destination/<name>``)."""
        self._check_open()
        target = posixpath.normpath(destination)
        if not destination.startswith("/") or not any(
            target == root or target.startswith(root + "/") for root in UPLOAD_ROOTS
        ):
            raise SandboxError(f"upload destination must be under {', '.join(UPLOAD_ROOTS)}: {destination}")
        source = Path(source)
        if not source.exists():
            raise SandboxError(f"upload source does not exist: {source}")
        # "dir/." copies the folder's contents; "target/" makes a file land inside the folder.
        copied, into = (f"{source}/.", target) if source.is_dir() else (str(source), f"{target}/")
        if target not in SESSION_DIRS:
            docker(["exec", self.container, "mkdir", "-p", "--", target])
        if any(target == root or target.startswith(root + "/") for root in docker_volume.TMPFS_FOLDERS):
            docker_copy.upload_through_tar(
                self.container, source, target
            )  # `docker cp` cannot write into a tmpfs
            return
        try:
            docker(["cp", copied, f"{self.container}:{into}"], timeout=300)
        except SandboxError:  # a command removed the folder: recreate it once
            docker(["exec", self.container, "mkdir", "-p", "--", target])
            docker(["cp", copied, f"{self.container}:{into}"], timeout=300)

    def exec(self, command: str, timeout_sec: float, workdir: str = "/app") -> ExecResult:
        """Run `command` with bash in `workdir`; at the timeout kill every process but PID 1."""
        self._check_open()
        seconds = max(timeout_sec, 0.001)
        argv = ["docker", "exec", "-w", workdir, self.container]
        argv += ["timeout", "-s", "KILL", f"{seconds:.3f}", "bash", "-c", command]
        started = time.monotonic()
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env()
        )
        assert process.stdout is not None and process.stderr is not None
        out = _Capped(process.stdout, self.limits.output_bytes)
        err = _Capped(process.stderr, self.limits.output_bytes)
        backstop = False
        try:
            code: int | None = process.wait(timeout=seconds + BACKSTOP_GRACE_SEC)
        except subprocess.TimeoutExpired:
            backstop = True
            process.kill()
            process.wait()
            code = None
        duration = time.monotonic() - started
        # timeout(1) signals its whole process group with KILL, itself included: status 137.
        timed_out = backstop or (code in (124, 137) and duration >= seconds)
        if timed_out:
            self.kill_all()
            code = None
        stdout, stderr = out.text(5.0), err.text(5.0)
        return ExecResult(
            exit_code=code,
            stdout=stdout,
            stderr=stderr,
            timed_out=timed_out,
            truncated=out.truncated or err.truncated,
            duration_sec=round(duration, 3),
        )

    def kill_all(self) -> None:
        """Kill every process of the container except PID 1 (setsid'd ones included)."""
        if not self._closed:
            docker(["exec", self.container, "kill", "-9", "-1"], timeout=30, check=False)

    def clear(self, path: str) -> None:
        """Remove `path` (links on the way removed, not followed) and make it again, empty."""
        self._check_open()
        target = posixpath.normpath(path)
        if not path.startswith("/") or not any(
            target == root or target.startswith(root + "/") for root in UPLOAD_ROOTS
        ):
            raise SandboxError(f"clear needs a folder under {', '.join(UPLOAD_ROOTS)}: {path}")
        docker(["exec", self.container, "sh", "-c", CLEAR_SCRIPT, "clear", target], timeout=120)

    def make_read_only(self, path: str) -> None:
        """Chown the folder's tree to root and drop every write bit (the container's commands run
        as root, who is not stopped by modes: what keeps the tests intact on Docker is that every
        agent process is killed before they are uploaded)."""
        self._check_open()
        target = posixpath.normpath(path)
        if target not in UPLOAD_ROOTS:
            raise SandboxError(f"make_read_only needs one of {', '.join(UPLOAD_ROOTS)}: {path}")
        script = 'chown -hR 0:0 -- "$1" && chmod -R a-w -- "$1"'
        docker(["exec", self.container, "sh", "-c", script, "make_read_only", target], timeout=120)

    def read_file(self, path: str) -> bytes | None:
        """The bytes of a regular file (first READ_LIMIT bytes), or None if there is none."""
        self._check_open()
        if not path.startswith("/"):
            raise SandboxError(f"read_file needs an absolute path: {path}")
        script = f'test -f "$1" || exit 3; exec head -c {READ_LIMIT} -- "$1"'
        done = docker(
            ["exec", self.container, "sh", "-c", script, "read_file", path], timeout=120, check=False
        )
        if done.returncode == 3:
            return None
        if done.returncode != 0:
            raise SandboxError(f"cannot read {path}: {done.stderr.decode(errors='replace').strip()}")
        return done.stdout

    def inspect(self, template: str) -> str:
        """``docker inspect --format`` of the container (for tests and diagnostics)."""
        return docker(["inspect", "--format", template, self.container]).stdout.decode().strip()

    def close(self) -> None:
        """Remove the container and its anonymous volumes (idempotent)."""
        if not self._closed:
            self._closed = True
            self._finalizer()


class DockerSandbox(Sandbox):
    """Builds environments into content-addressed images and runs sessions in containers."""

    backend: ClassVar[str] = "docker"

    def __init__(
        self,
        build_timeout_sec: float = 900.0,
        start_timeout_sec: float = 120.0,
        build_network: registries.BuildNetwork | None = None,
        ceiling: OperatorCeiling | None = None,
    ) -> None:
        #: what a build may use (memory, CPUs, processes, image size): the operator's ceiling
        self.ceiling = ceiling or operator_ceiling()
        self.build_timeout_sec = min(build_timeout_sec, self.ceiling.timeout_sec)
        self.start_timeout_sec = start_timeout_sec
        #: what builds reach (default: `registries.BUILD_NETWORK_ENV`, else the package registries)
        self.build_network = build_network or registries.build_network_from_env()
        #: how many images this instance built (a cache hit does not count)
        self.builds = 0

    @classmethod
    def available(cls) -> bool:
        """Whether the engine answers within 3 s."""
        try:
            docker(["version", "--format", "{{.Server.Version}}"], timeout=3)
        except SandboxError:
            return False
        return True

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
        size = docker(["image", "inspect", "--format", "{{.Size}}", tag]).stdout.decode().strip()
        too_large = build_limits.image_size_problem(int(size or 0), self.ceiling)
        if too_large:
            docker(["image", "rm", "-f", tag], check=False)
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
        """Build (or reuse) the image and start a limited, network-less container."""
        image = self.ensure_image(bundle)
        session_id = uuid.uuid4().hex[:12]
        container = f"envpipeline-{session_id}"
        memory = f"{limits.memory_mb}m"
        file_size = limits.file_size_mb * 1024 * 1024
        args = ["run", "-d", "--name", container, "--label", f"{SESSION_LABEL}={session_id}"]
        args += ["--label", f"{ownership.OWNER_LABEL}={ownership.owner()}"]
        args += ["--label", f"{ownership.EXPIRES_LABEL}={ownership.expiry()}"]
        args += [
            "--network",
            "none",
            "--cpus",
            f"{limits.cpus:g}",
            "--memory",
            memory,
            "--memory-swap",
            memory,
        ]
        args += ["--pids-limit", str(limits.pids), "--ulimit", f"fsize={file_size}:{file_size}"]
        args += ["--ulimit", "nofile=1024:1024", "--security-opt", "no-new-privileges"]
        args += [arg for cap in DROPPED_CAPS for arg in ("--cap-drop", cap)]
        app_volume = docker_volume.create_app_volume(session_id, limits.storage_mb)
        if app_volume is not None:
            args += ["--mount", f"type=volume,src={app_volume},dst=/app"]
        args += docker_volume.tmpfs_args(limits.storage_mb)
        args += ["--entrypoint", "bash", image, "-c", KEEPALIVE]
        try:
            docker(args, timeout=self.start_timeout_sec)
        except SandboxError:
            _remove_container(container, app_volume)
            raise
        session = DockerSession(container, session_id, image, limits, app_volume)
        try:
            if docker_volume.image_has_files_under_tmpfs(image):
                docker_copy.copy_image_folders(image, container, docker_volume.TMPFS_FOLDERS)
            docker(["exec", container, "mkdir", "-p", *SESSION_DIRS])
        except SandboxError:
            session.close()
            raise
        return session
