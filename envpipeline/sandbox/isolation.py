"""Namespaces and processes under the local sandbox: the keeper, entering it, draining output.

A session's namespaces are held by a *keeper*: ``bwrap --die-with-parent`` (or ``unshare`` plus a
mount script when bubblewrap is missing) over the image's tree bound read-only at ``/`` (or the
host's ``/usr`` and ``/etc`` without one), with new mount, PID, net, IPC and UTS namespaces and
no user namespace, whose first user process idles as root (without capabilities under bwrap) so
the sandbox user can neither kill nor ptrace it. Commands enter with `enter_command`: the
compiled helper of `envpipeline.sandbox.enter`, or else ``prlimit`` (rlimits) -> ``nsenter`` (the
keeper's namespaces and root) -> ``setpriv`` (unprivileged uid/gid, no groups, no capabilities,
``no_new_privs``) -> ``env -i`` (a minimal environment).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import select
import selectors
import shutil
import signal
import subprocess
import time
from functools import cache
from pathlib import Path

from envpipeline.sandbox import disk_quota, enter
from envpipeline.sandbox.base import Limits

#: The whole environment of a sandboxed command (plus the Dockerfile's ENV).
BASE_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME": "/tmp",
    "LANG": "C.UTF-8",
}
#: Session folders (host side) and where they appear in the sandbox.
MOUNTS = {"app": "/app", "logs": "/logs", "tests": "/tests", "solution": "/solution", "tmp": "/tmp"}
#: Open files per process.
NOFILE = 1024
#: Seconds to keep draining output after the command exits (background children may hold the pipes).
PIPE_GRACE_SEC = 0.3
#: PID 1's child in the sandbox: says it is ready, then idles (and reaps) until killed.
KEEPALIVE = 'echo ready; trap "exit 0" TERM; while :; do sleep 86400 & wait; done'
#: The same under bwrap, whose own PID 1 reaps orphans: no shell needs to stay behind.
KEEPALIVE_BWRAP = "echo ready; exec sleep infinity"
#: Host tools every command passes through.
TOOLS = ("nsenter", "setpriv", "prlimit", "env", "tar")

#: The ``unshare`` fallback: mount the sandbox root by hand, then chroot into the keeper. With a
#: tree ($4, see `envpipeline.sandbox.rootfs`) the root is that tree bound read-only; without one it
#: is a tmpfs holding the host's /usr, /etc and /bin, /lib... (read-only).
_UNSHARE_SETUP = r"""set -e
R="$1"; S="$2"; K="$3"; F="$4"
mount --make-rprivate /
if [ -n "$F" ]; then
  mount --rbind "$F" "$R"; mount -o remount,bind,ro "$R"
else
  mount -t tmpfs -o mode=755 tmpfs "$R"
  mkdir -p "$R/usr" "$R/etc" "$R/proc" "$R/dev" "$R/var/tmp"
  for d in usr etc; do mount --rbind "/$d" "$R/$d"; mount -o remount,bind,ro "$R/$d"; done
  for d in bin sbin lib lib32 lib64 libx32; do
    if [ -L "/$d" ]; then ln -s "$(readlink "/$d")" "$R/$d"
    elif [ -d "/$d" ]; then mkdir "$R/$d"; mount --rbind "/$d" "$R/$d"; mount -o remount,bind,ro "$R/$d"; fi
  done
  for d in app logs tests solution tmp; do mkdir "$R/$d"; done
fi
for d in app logs tests solution tmp; do mount --bind "$S/$d" "$R/$d"; done
mount --bind "$S/tmp" "$R/var/tmp"
mount -t proc -o nosuid,nodev,noexec proc "$R/proc"
mount -t tmpfs -o mode=755,nosuid tmpfs "$R/dev"
for n in null zero full random urandom tty; do touch "$R/dev/$n"; mount --bind "/dev/$n" "$R/dev/$n"; done
mkdir "$R/dev/shm"; mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$R/dev/shm"
ln -s /proc/self/fd "$R/dev/fd"
hostname sandbox; ip link set lo up 2>/dev/null || true
exec chroot "$R" /bin/bash -c "$K"
"""


def _host_links() -> list[str]:
    """bwrap arguments reproducing the host's top-level /bin, /lib... (symlinks or read-only dirs)."""
    args: list[str] = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), str(host)]
        elif host.is_dir():
            args += ["--ro-bind", str(host), str(host)]
    return args


def keeper_argv(
    isolation: str, root: Path, info_fd: int | None = None, tree: Path | None = None
) -> list[str]:
    """The command that creates the namespaces and runs KEEPALIVE as their first user process.

    `tree` is the image's root filesystem (`envpipeline.sandbox.rootfs`), bound read-only at ``/``
    under the session folders; None binds the host's ``/usr``, ``/etc`` and ``/bin``, ``/lib``...
    Under bwrap, `info_fd` receives ``{"child-pid": N}``: the host pid of the namespace's PID 1.
    """
    if isolation == "bwrap":
        args = ["bwrap", "--die-with-parent", "--new-session", "--unshare-ipc", "--unshare-pid"]
        args += ["--info-fd", str(info_fd)] if info_fd is not None else []
        args += ["--unshare-net", "--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox"]
        if tree is not None:  # the tree has every mount point, so nothing is created on the ro root
            args += ["--ro-bind", str(tree), "/"]
        else:
            args += ["--ro-bind", "/usr", "/usr", *_host_links(), "--ro-bind", "/etc", "/etc"]
            args += ["--perms", "0755", "--dir", "/var"]  # bwrap makes parent folders 0700
        args += ["--proc", "/proc", "--dev", "/dev"]
        for name, target in MOUNTS.items():
            args += ["--bind", str(root / name), target]
        args += ["--bind", str(root / "tmp"), "/var/tmp"]
        return [*args, "--clearenv", "--setenv", "PATH", BASE_ENV["PATH"], "/bin/sh", "-c", KEEPALIVE_BWRAP]
    unshare = ["unshare", "--mount", "--pid", "--fork", "--net", "--ipc", "--uts", "--kill-child"]
    script = ["/bin/sh", "-c", _UNSHARE_SETUP, "setup", str(root / "root"), str(root), KEEPALIVE]
    return ["setpriv", "--pdeathsig", "KILL", "--", *unshare, "--", *script, str(tree or "")]


PROBES = {
    "bwrap": ["bwrap", "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "--proc", "/proc", "true"],
    "unshare": ["unshare", "--mount", "--pid", "--fork", "--net", "--kill-child", "true"],
}


@cache
def isolation_works(name: str) -> bool:
    """Whether `name` ("bwrap" or "unshare") really isolates here (root, tools present, a probe runs)."""
    argv = PROBES.get(name)
    if argv is None or os.geteuid() != 0 or not all(shutil.which(tool) for tool in (*TOOLS, argv[0])):
        return False
    try:
        return (
            subprocess.run(argv, capture_output=True, timeout=10, env={"PATH": BASE_ENV["PATH"]}).returncode
            == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        return False


def detect_isolation() -> str | None:
    """The isolation this host offers: bubblewrap first, then plain namespaces."""
    return next((name for name in PROBES if isolation_works(name)), None)


def children(pid: int) -> list[int]:
    """Host pids whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def read_child_pid(fd: int, deadline: float) -> int | None:
    """The ``child-pid`` of bwrap's ``--info-fd`` JSON (None if it never comes)."""
    data = b""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            with contextlib.suppress(ValueError, AttributeError):
                pid = json.loads(data).get("child-pid")
                return pid if isinstance(pid, int) and pid > 0 else None
            if not selector.select(max(deadline - time.monotonic(), 0.0)):
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                return None
            data += chunk
    return None


def wait_exit(process: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait up to `timeout` seconds for `process` to exit (and reap it); whether it did.

    A pidfd wakes up at the exit itself, where ``Popen.wait(timeout)`` polls with growing sleeps.
    """
    if process.returncode is None:
        with contextlib.suppress(OSError, AttributeError):
            fd = os.pidfd_open(process.pid)
            try:
                select.select([fd], [], [], max(timeout, 0.0))
            finally:
                os.close(fd)
    try:
        process.wait(timeout=0)
    except subprocess.TimeoutExpired:
        return False
    return True


def stop_keeper(
    keeper: subprocess.Popen[bytes], pid1: int | None, root: Path, info: int | None = None
) -> None:
    """Kill the namespace's PID 1 (the kernel kills everything else in it) and remove the root.

    The keeper itself exits once its child is gone and reaps it, so no zombie is left behind.
    When PID 1 was never looked up, it is found now (bwrap's info fd, else the keeper's child).
    """
    if pid1 is None and info is None and keeper.poll() is None:
        pid1 = next(iter(children(keeper.pid)), None)
    if pid1 is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid1, signal.SIGKILL)
        wait_exit(keeper, 10)
    try:
        keeper.wait(timeout=0)
    except subprocess.TimeoutExpired:
        keeper.kill()
        keeper.wait()
    if info is not None:
        if pid1 is None:  # bwrap's PID 1 outlives bwrap itself: its pid is in the info pipe by now
            with contextlib.suppress(OSError):
                os.set_blocking(info, False)
                orphan = read_child_pid(info, time.monotonic() + 0.2)
                if orphan is not None:
                    os.kill(orphan, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.close(info)
    for stream in (keeper.stdout, keeper.stderr):
        if stream is not None:
            stream.close()
    disk_quota.release(root)
    shutil.rmtree(root, ignore_errors=True)


def collect_output(
    process: subprocess.Popen[bytes], deadline: float, cap: int
) -> tuple[bytes, bytes, bool, bool]:
    """Drain stdout/stderr until exit (+grace) or the deadline: (out, err, truncated, timed_out)."""
    assert process.stdout is not None and process.stderr is not None
    kept = {process.stdout.fileno(): bytearray(), process.stderr.fileno(): bytearray()}
    truncated = timed_out = False
    exited_at: float | None = None
    with selectors.DefaultSelector() as selector:
        for fd in kept:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            now = time.monotonic()
            if exited_at is None and process.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > PIPE_GRACE_SEC:
                break
            if exited_at is None and now >= deadline:
                timed_out = True
                break
            for key, _ in selector.select(timeout=min(0.1, max(deadline - now, 0.0))):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fd)
                    continue
                buffer = kept[key.fd]
                room = cap - len(buffer)
                if len(chunk) > room:
                    truncated = True
                if room > 0:
                    buffer += chunk[:room]
    if not timed_out and process.poll() is None:
        timed_out = time.monotonic() >= deadline
    return bytes(kept[process.stdout.fileno()]), bytes(kept[process.stderr.fileno()]), truncated, timed_out


def rlimits(limits: Limits, timeout: float) -> list[int]:
    """[cpu soft, cpu hard, address space, processes, file size, open files] for one command."""
    mb = 1024 * 1024
    cpu = math.ceil(timeout * max(limits.cpus, 1.0)) + 1
    return [cpu, cpu + 1, limits.memory_mb * mb, limits.pids, limits.file_size_mb * mb, NOFILE]


def enter_command(
    pid1: int, uid: int, gid: int, env: dict[str, str], workdir: str, limits: Limits, timeout: float | None
) -> tuple[list[str], dict[str, str]]:
    """The host command (and its whole environment) that runs the rest of an argv inside the keeper's
    namespaces as `uid`; with a `timeout` the session rlimits are set first (CPU seconds scale with it).

    The compiled helper (`envpipeline.sandbox.enter`) does it in one process; without a C compiler
    the util-linux chain ``prlimit`` -> ``nsenter`` -> ``setpriv`` -> ``env -i`` does the same.
    """
    variables = {**BASE_ENV, **env}
    numbers = rlimits(limits, timeout) if timeout is not None else None
    helper = enter.helper_path()
    if helper is not None:
        return enter.helper_argv(helper, pid1, uid, gid, workdir, numbers), variables
    command: list[str] = []
    if numbers is not None:
        cpu, cpu_hard, address, nproc, fsize, nofile = numbers
        command += ["prlimit", f"--cpu={cpu}:{cpu_hard}", f"--as={address}", f"--nproc={nproc}"]
        command += [f"--fsize={fsize}", f"--nofile={nofile}", "--core=0", "--"]
    command += ["nsenter", f"--target={pid1}", "--mount", "--pid", "--net", "--ipc", "--uts", "--root", "--"]
    command += ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]
    command += ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    pairs = [f"{key}={value}" for key, value in variables.items()]
    return [*command, "env", "-i", "-C", workdir, *pairs], {"PATH": BASE_ENV["PATH"]}
