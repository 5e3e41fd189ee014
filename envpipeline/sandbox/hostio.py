"""Host-side fast paths into a session's folders that never follow a symlink the sandbox planted.

Unpacking an upload or reading a reward file inside the sandbox costs a process launch through
the namespaces. When the sandbox path lies in one of the session's bind-mounted folders, the
host can do the same work directly on ``<root>/<folder>`` -- provided nothing the sandboxed user
created can redirect it. Every step here is relative to a directory file descriptor and opened
with ``O_NOFOLLOW``, new files are created with ``O_EXCL`` and immediately handed to the sandbox
user, and directories are only entered when the sandbox user could enter (and, for writes,
write) them itself. Anything else -- a symlink on the way, an existing file, a special file, a
permission the sandbox user lacks, an odd archive member -- raises `Unsafe`, and the caller falls
back to doing the work inside the sandbox as the sandbox user, where symlinks resolve inside.
A racing sandbox process can at worst make a step fail (then the fallback runs); it cannot make
the host touch anything outside the session folder, because held descriptors do not move.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

#: The umask the sandbox user's ``tar`` applies to archive modes.
UMASK = 0o022
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Unsafe(Exception):
    """The host-side shortcut does not apply; do the work inside the sandbox instead."""


def split(root: Path, mounts: dict[str, str], path: str) -> tuple[Path, list[str]]:
    """The host folder of the session mount holding sandbox `path` and the names below it."""
    names = [name for name in path.split("/") if name]
    if not path.startswith("/") or any(name in (".", "..") for name in names):
        raise Unsafe(path)
    for folder, target in mounts.items():
        if names[:1] == [target.strip("/")]:
            return root / folder, names[1:]
    raise Unsafe(path)


def _allowed(info: os.stat_result, uid: int, gid: int, bits: int) -> bool:
    """Whether the sandbox user has the rwx `bits` (``0o7`` mask scale) on a file."""
    if info.st_uid == uid:
        return (info.st_mode >> 6) & bits == bits
    if info.st_gid == gid:
        return (info.st_mode >> 3) & bits == bits
    return info.st_mode & bits == bits


def _enter(parent: int, name: str, uid: int, gid: int, write: bool) -> int:
    """Open the directory `name` under `parent` (no symlinks; the sandbox user must be able to)."""
    try:
        fd = os.open(name, _DIR, dir_fd=parent)
    except OSError as e:
        raise Unsafe(name) from e
    if not _allowed(os.fstat(fd), uid, gid, 0o3 if write else 0o1):
        os.close(fd)
        raise Unsafe(name)
    return fd


@contextlib.contextmanager
def _opened(folder: Path, uid: int, gid: int, write: bool) -> Iterator[int]:
    """The session folder itself (created by us, inside our 0700 root) as a descriptor."""
    fd = os.open(folder, _DIR)
    try:
        if not _allowed(os.fstat(fd), uid, gid, 0o3 if write else 0o1):
            raise Unsafe(str(folder))
        yield fd
    finally:
        os.close(fd)


def read(root: Path, mounts: dict[str, str], path: str, uid: int, gid: int, limit: int) -> bytes | None:
    """The first `limit` bytes of a regular file, None where ``test -f`` would be false, or Unsafe."""
    folder, names = split(root, mounts, path)
    if not names:
        return None
    with _opened(folder, uid, gid, write=False) as top:
        fds: list[int] = []
        try:
            parent = top
            for name in names[:-1]:
                try:
                    info = os.stat(name, dir_fd=parent, follow_symlinks=False)
                except FileNotFoundError:
                    return None
                if not stat.S_ISDIR(info.st_mode) and not stat.S_ISLNK(info.st_mode):
                    return None
                parent = _enter(parent, name, uid, gid, write=False)
                fds.append(parent)
            try:
                fd = os.open(
                    names[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=parent
                )
            except FileNotFoundError:
                return None
            except OSError as e:  # a symlink (ELOOP) or something we may not open
                raise Unsafe(path) from e
            try:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode):
                    return None
                if not _allowed(info, uid, gid, 0o4):
                    raise Unsafe(path)
                chunks, left = [], limit
                while left > 0:
                    chunk = os.read(fd, min(left, 1 << 20))
                    if not chunk:
                        break
                    chunks.append(chunk)
                    left -= len(chunk)
                return b"".join(chunks)
            finally:
                os.close(fd)
        finally:
            for fd in fds:
                os.close(fd)


class _Writer:
    """Creates archive members under one session directory, as the sandbox user would."""

    def __init__(self, top: int, uid: int, gid: int) -> None:
        self.uid, self.gid = uid, gid
        self.dirs: dict[tuple[str, ...], int] = {(): top}

    def directory(self, names: tuple[str, ...], mode: int | None = None) -> int:
        """The descriptor of a directory below the top, created (``mkdir -p``) where missing."""
        if names in self.dirs:
            fd = self.dirs[names]
        else:
            parent = self.directory(names[:-1])
            with contextlib.suppress(FileExistsError):
                os.mkdir(names[-1], 0o700, dir_fd=parent)
                created = os.open(names[-1], _DIR, dir_fd=parent)
                os.fchown(created, self.uid, self.gid)
                os.fchmod(created, 0o777 & ~UMASK)
                os.close(created)
            fd = _enter(parent, names[-1], self.uid, self.gid, write=True)
            self.dirs[names] = fd
        if mode is not None and os.fstat(fd).st_uid == self.uid:
            os.fchmod(fd, mode & 0o777 & ~UMASK)
        return fd

    def file(self, names: tuple[str, ...], data: IO[bytes], info: tarfile.TarInfo) -> None:
        parent = self.directory(names[:-1])
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(names[-1], flags, 0o600, dir_fd=parent)
        except OSError as e:  # it exists (the sandbox tar would replace it): let the sandbox do it
            raise Unsafe("/".join(names)) from e
        try:
            os.fchown(fd, self.uid, self.gid)
            with os.fdopen(os.dup(fd), "wb") as out:
                while chunk := data.read(1 << 20):
                    out.write(chunk)
            os.fchmod(fd, info.mode & 0o777 & ~UMASK)
            os.utime(fd, (info.mtime, info.mtime))
        finally:
            os.close(fd)

    def symlink(self, names: tuple[str, ...], target: str) -> None:
        parent = self.directory(names[:-1])
        try:
            os.symlink(target, names[-1], dir_fd=parent)
        except OSError as e:
            raise Unsafe("/".join(names)) from e
        # only the sandbox can have replaced it since, with something in its own session folder
        os.chown(names[-1], self.uid, self.gid, dir_fd=parent, follow_symlinks=False)

    def close(self) -> None:
        for names, fd in self.dirs.items():
            if names:
                os.close(fd)


def extract(
    archive: IO[bytes], root: Path, mounts: dict[str, str], directory: str, uid: int, gid: int
) -> None:
    """Unpack a tar stream under sandbox `directory` from the host (Unsafe: do it in the sandbox)."""
    folder, base = split(root, mounts, directory)
    archive.seek(0)
    with _opened(folder, uid, gid, write=True) as top, tarfile.open(fileobj=archive, mode="r:") as tar:
        writer = _Writer(top, uid, gid)
        try:
            for member in tar:
                parts = [name for name in member.name.split("/") if name]
                if not parts or any(name in (".", "..") for name in parts) or member.name.startswith("/"):
                    raise Unsafe(member.name)
                names = (*base, *parts)
                if member.isdir():
                    writer.directory(names, member.mode)
                elif member.isreg():
                    data = tar.extractfile(member)
                    assert data is not None
                    writer.file(names, data, member)
                elif member.issym():
                    writer.symlink(names, member.linkname)
                else:
                    raise Unsafe(member.name)
            writer.directory(tuple(base))
        except (OSError, tarfile.TarError) as e:
            raise Unsafe(str(e)) from e
        finally:
            writer.close()


def pack(root: Path, mounts: dict[str, str], directory: str, uid: int, gid: int, limit: int) -> bytes:
    """A tar of sandbox `directory`'s contents (members ``./name``), as the sandbox user's
    ``tar -cf - -C directory .`` would make it, read from the host (Unsafe: pack in the sandbox).

    Directories, regular files and symlinks (stored as links, never followed) only; anything the
    sandbox user could not read or list, any other kind of file, or more than `limit` bytes of
    archive raises Unsafe, so the sandbox's own ``tar`` decides (and reports) those cases."""
    folder, names = split(root, mounts, directory)
    buffer = io.BytesIO()
    with _opened(folder, uid, gid, write=False) as top:
        if not _allowed(os.fstat(top), uid, gid, 0o5):
            raise Unsafe(directory)
        fds: list[int] = []
        try:
            parent = top
            for name in names:
                parent = _enter(parent, name, uid, gid, write=False)
                fds.append(parent)
            if names and not _allowed(os.fstat(parent), uid, gid, 0o5):
                raise Unsafe(directory)
            with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as tar:
                tar.addfile(_member(".", os.fstat(parent)))
                _pack_folder(tar, parent, ".", uid, gid, buffer, limit)
        except (OSError, ValueError, tarfile.TarError) as e:  # e.g. a file that shrank meanwhile
            raise Unsafe(str(e)) from e
        finally:
            for fd in fds:
                os.close(fd)
    return buffer.getvalue()


def _member(name: str, info: os.stat_result, link: str = "") -> tarfile.TarInfo:
    """The archive entry of one directory, symlink or regular file."""
    member = tarfile.TarInfo(name)
    member.mode, member.mtime = stat.S_IMODE(info.st_mode), int(info.st_mtime)
    member.uid, member.gid = info.st_uid, info.st_gid
    if stat.S_ISDIR(info.st_mode):
        member.type = tarfile.DIRTYPE
    elif stat.S_ISLNK(info.st_mode):
        member.type, member.linkname = tarfile.SYMTYPE, link
    else:
        member.type, member.size = tarfile.REGTYPE, info.st_size
    return member


def _pack_folder(
    tar: tarfile.TarFile, folder: int, prefix: str, uid: int, gid: int, buffer: io.BytesIO, limit: int
) -> None:
    """Add everything under the open directory `folder` (named `prefix` in the archive)."""
    for name in sorted(os.listdir(folder)):
        arcname = f"{prefix}/{name}"
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            tar.addfile(_member(arcname, info, os.readlink(name, dir_fd=folder)))
        elif stat.S_ISDIR(info.st_mode):
            child = _enter(folder, name, uid, gid, write=False)
            try:
                if not _allowed(os.fstat(child), uid, gid, 0o5):
                    raise Unsafe(arcname)
                tar.addfile(_member(arcname, os.fstat(child)))
                _pack_folder(tar, child, arcname, uid, gid, buffer, limit)
            finally:
                os.close(child)
        elif stat.S_ISREG(info.st_mode):
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
            try:
                opened = os.fstat(fd)
                if not stat.S_ISREG(opened.st_mode) or not _allowed(opened, uid, gid, 0o4):
                    raise Unsafe(arcname)
                if buffer.tell() + opened.st_size > limit:
                    raise Unsafe(f"{arcname}: the archive would pass {limit} bytes")
                with os.fdopen(os.dup(fd), "rb") as data:
                    tar.addfile(_member(arcname, opened), data)
            finally:
                os.close(fd)
        else:
            raise Unsafe(arcname)
