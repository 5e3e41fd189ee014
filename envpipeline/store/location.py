"""Where the lake lives: a local folder by default, any filesystem URI by configuration.

Every lake path goes through one `pyarrow.fs.FileSystem` (pyarrow is a core dependency):

- a plain path or ``file:///...`` -> the local filesystem (files on disk exactly as before);
- a URI pyarrow knows (``s3://bucket/lake``, ``gs://...``, ``hdfs://...``) -> pyarrow's own
  filesystem, credentials from the usual environment (``AWS_*``, ``?endpoint_override=`` for an
  S3-compatible store);
- any other scheme (``memory://``, ``gcs://``, ``az://``...) -> the fsspec filesystem of that
  protocol, wrapped for pyarrow (fsspec and the protocol's package must be installed).

DuckDB reads the same files: a local lake by path; an fsspec lake through the filesystem
registered on each connection (`LakeLocation.attach`); a pyarrow-native remote lake by its URI,
which needs DuckDB's ``httpfs`` extension loaded and its credentials set (a ``CREATE SECRET``):
nothing here downloads the extension.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.fs as pafs

from envpipeline.errors import StoreError

__all__ = ["LakeLocation", "resolve_location"]


@dataclass(frozen=True)
class LakeLocation:
    """One lake root: the filesystem, the root path inside it and how DuckDB names it.

    Attributes:
        filesystem: every read, write, list and rename goes through it.
        root: the lake's root path inside `filesystem` (no scheme).
        scan_prefix: the root as DuckDB's ``read_parquet`` takes it (a local path, or a URI).
        local: whether the files are on the local disk (atomic renames, fsync, orphan pids).
        fsspec: the fsspec filesystem to register on a DuckDB connection, if the lake uses one.
    """

    filesystem: pafs.FileSystem
    root: str
    scan_prefix: str
    local: bool
    fsspec: Any = None

    def scan_path(self, path: str) -> str:
        """A path under `root` as DuckDB reads it."""
        return self.scan_prefix + path[len(self.root) :]

    def attach(self, con: Any) -> None:
        """Let a DuckDB connection read this lake (registers an fsspec filesystem; else nothing)."""
        if self.fsspec is not None:
            con.register_filesystem(self.fsspec)


def resolve_location(where: str | Path) -> LakeLocation:
    """The lake location of a local path, a ``file://`` URI or any other filesystem URI."""
    text = str(where)
    scheme = urlsplit(text).scheme if "://" in text else ""
    if not scheme or scheme == "file":
        local = Path(urlsplit(text).path if scheme else text).absolute()
        return LakeLocation(pafs.LocalFileSystem(), str(local), str(local), local=True)
    try:
        filesystem, root = pafs.FileSystem.from_uri(text)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return _fsspec_location(text)
    except (pa.ArrowException, OSError) as e:
        raise StoreError(f"lake URI {text!r}: {e}") from e
    root = root.rstrip("/")
    return LakeLocation(filesystem, root, f"{scheme}://{root}", local=False)


def _fsspec_location(uri: str) -> LakeLocation:
    try:
        from fsspec.core import url_to_fs
    except ImportError as e:
        raise StoreError(
            f"lake URI {uri!r}: pyarrow has no filesystem for it and fsspec is not installed"
        ) from e
    try:
        fs, root = url_to_fs(uri)
    except (ImportError, ValueError) as e:
        raise StoreError(f"lake URI {uri!r}: {e}") from e
    root = str(root).rstrip("/")
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    wrapped = pafs.PyFileSystem(pafs.FSSpecHandler(fs))
    return LakeLocation(wrapped, root, f"{protocol}://{root}", local=False, fsspec=fs)
