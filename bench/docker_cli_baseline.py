"""The pre-#16 Docker session path, kept only as the baseline of `bench/docker_sandbox.py`.

`LegacyCliDockerSandbox` opens sessions the way `envpipeline.sandbox.docker` did before it moved to
the Engine API: every create, exec, copy and removal is a ``docker`` CLI process (``docker run``,
``docker exec``, ``docker cp``, ``docker rm``, ``docker volume ...``). Image builds and the content
addressed tags are inherited from `DockerSandbox` unchanged. Not for production use.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from envpipeline.errors import SandboxError
from envpipeline.models.bundle import Bundle
from envpipeline.sandbox import docker_volume, ownership
from envpipeline.sandbox.base import BASE_IMAGE, ExecResult, Limits
from envpipeline.sandbox.docker import (
    BACKSTOP_GRACE_SEC,
    CLEAR_SCRIPT,
    DROPPED_CAPS,
    KEEPALIVE,
    READ_LIMIT,
    SESSION_DIRS,
    SESSION_LABEL,
    UPLOAD_ROOTS,
    DockerSandbox,
    DockerSession,
)
from envpipeline.sandbox.docker_cli import cli_env, docker


def _legacy_remove_container(name: str, volume: str | None = None) -> None:
    with contextlib.suppress(SandboxError):
        docker(["rm", "-f", "-v", name], timeout=60, check=False)
    if volume is not None:
        legacy_remove_app_volume(volume)


def _docker(args: list[str]) -> subprocess.CompletedProcess[bytes]:
    return docker(args, timeout=60, check=False)


def legacy_create_app_volume(session_id: str, size_mb: int) -> str | None:
    """A named volume of `size_mb` for the session's ``/app``; None where one cannot be made."""
    if os.geteuid() != 0 or shutil.which("losetup") is None or shutil.which("mount") is None:
        return None
    image = Path(tempfile.gettempdir()) / f"envpipeline-vol-{os.getpid()}-{session_id}.img"
    name = docker_volume.volume_name(session_id)
    try:
        docker_volume._format(image, size_mb)
        device = docker_volume._run(["losetup", "--find", "--show", str(image)])
        labels = {
            docker_volume.VOLUME_LABEL: session_id,
            docker_volume.IMAGE_LABEL: str(image),
            ownership.OWNER_LABEL: ownership.owner(),
            ownership.EXPIRES_LABEL: ownership.expiry(),
        }
        args = ["volume", "create", "--driver", "local", "--opt", "type=ext4", "--opt", f"device={device}"]
        args += [arg for key, value in labels.items() for arg in ("--label", f"{key}={value}")]
        if _docker([*args, name]).returncode != 0:
            raise OSError(f"docker volume create {name} failed")
    except (OSError, subprocess.TimeoutExpired, SandboxError):
        legacy_remove_app_volume(name, image)  # whatever of it was made: volume, loop device, image
        return None
    return name


def _legacy_loop_device_of(image: Path) -> str:
    """The loop device an image is attached to ('' when none)."""
    try:
        listed = docker_volume._run(["losetup", "-j", str(image)])
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return listed.partition(":")[0]


def legacy_remove_app_volume(name: str, image: str | Path | None = None) -> None:
    """Remove a session volume, detach its loop device and delete its image (idempotent)."""
    if image is None:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired, SandboxError):
            done = _docker(
                [
                    "volume",
                    "inspect",
                    "--format",
                    f'{{{{index .Labels "{docker_volume.IMAGE_LABEL}"}}}}',
                    name,
                ]
            )
            image = done.stdout.decode().strip() if done.returncode == 0 else None
    path = Path(image) if image else None
    device = _legacy_loop_device_of(path) if path else ""
    with contextlib.suppress(OSError, subprocess.TimeoutExpired, SandboxError):
        _docker(["volume", "rm", "-f", name])
    if device:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run(["losetup", "-d", device], capture_output=True, timeout=60)
    if path is not None:
        path.unlink(missing_ok=True)


#: Unpack a tar stream from stdin into $1 (made first: a command may have removed it).
UNTAR_SCRIPT = 'mkdir -p -- "$1" && exec tar -x --no-same-owner -C "$1" -f -'


def _pipe(producer: list[str], container: str, target: str) -> tuple[int, str]:
    """Run `producer` (which writes a tar archive) into `UNTAR_SCRIPT` in `container`; (status, why)."""
    packer = subprocess.Popen(producer, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=cli_env())
    try:
        unpacked = subprocess.run(
            ["docker", "exec", "-i", container, "sh", "-c", UNTAR_SCRIPT, "untar", target],
            stdin=packer.stdout,
            capture_output=True,
            timeout=300,
            env=cli_env(),
        )
    finally:
        if packer.stdout is not None:
            packer.stdout.close()
        packer.wait(timeout=60)
    status = unpacked.returncode or packer.returncode
    return status, unpacked.stderr.decode(errors="replace").strip() or f"tar exited {packer.returncode}"


def upload_through_tar(container: str, source: Path, target: str) -> None:
    """Stream `source` (a folder's contents, or one file) into `target` inside the container."""
    folder, names = (source, ["."]) if source.is_dir() else (source.parent, [source.name])
    status, why = _pipe(["tar", "-C", str(folder), "-cf", "-", *names], container, target)
    if status != 0:
        raise SandboxError(f"upload of {source} to {target} failed: {why}")


def copy_image_folders(image: str, container: str, folders: Sequence[str]) -> None:
    """Give a session what its image ships under `folders` (tmpfs mounts hide it): the trial's
    checks must see, e.g., a reward file an image pre-seeds. Best effort: a folder the image lacks
    copies nothing."""
    for folder in folders:
        reader = ["docker", "run", "--rm", "--network", "none", "--entrypoint", "tar", image]
        _pipe([*reader, "-C", folder, "-cf", "-", "."], container, folder)


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


class LegacyCliDockerSession(DockerSession):
    """The pre-#16 session: every operation is a ``docker`` CLI process."""

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
        self._finalizer = weakref.finalize(self, _legacy_remove_container, container, app_volume)

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
            upload_through_tar(self.container, source, target)  # `docker cp` cannot write into a tmpfs
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


class LegacyCliDockerSandbox(DockerSandbox):
    """`DockerSandbox` with the pre-#16 sessions: ``docker`` CLI processes, no spare."""

    def ensure_image(self, bundle: Bundle) -> str:
        """As before #16: the base image and the tag are looked up with the CLI on every open."""
        docker(["image", "inspect", "--format", "{{.Id}}", BASE_IMAGE], check=False)
        tag = super().ensure_image(bundle)
        docker(["image", "inspect", "--format", "{{.Id}}", tag], check=False)
        return tag

    def open(self, bundle: Bundle, limits: Limits) -> LegacyCliDockerSession:
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
        app_volume = legacy_create_app_volume(session_id, limits.storage_mb)
        if app_volume is not None:
            args += ["--mount", f"type=volume,src={app_volume},dst=/app"]
        args += [
            a
            for folder, options in docker_volume.tmpfs_mounts(limits.storage_mb).items()
            for a in ("--tmpfs", f"{folder}:{options}")
        ]
        args += ["--entrypoint", "bash", image, "-c", KEEPALIVE]
        try:
            docker(args, timeout=self.start_timeout_sec)
        except SandboxError:
            _legacy_remove_container(container, app_volume)
            raise
        session = LegacyCliDockerSession(container, session_id, image, limits, app_volume)
        try:
            if docker_volume.image_has_files_under_tmpfs(image):
                copy_image_folders(image, container, docker_volume.TMPFS_FOLDERS)
            docker(["exec", container, "mkdir", "-p", *SESSION_DIRS])
        except SandboxError:
            session.close()
            raise
        return session
