"""What the Harbor exporters of every family share: folder names, fresh task folders, difficulty labels."""

from __future__ import annotations

import gzip
import io
import re
import shutil
import tarfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from envpipeline.errors import ConfigError

#: The difficulty labels a Harbor task.toml accepts.
HarborDifficulty = Literal["easy", "medium", "hard", "unknown"]
_KNOWN_DIFFICULTIES: dict[str, HarborDifficulty] = {"easy": "easy", "medium": "medium", "hard": "hard"}


def safe_name(name: str) -> str:
    """A folder name made of [A-Za-z0-9_.-] (anything else becomes '-')."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "-", name).strip(".-")
    if not cleaned:
        raise ConfigError(f"cannot make a folder name from {name!r}")
    return cleaned


def harbor_difficulty(metadata: Mapping[str, Any]) -> HarborDifficulty:
    """The task.toml difficulty of a record's metadata (``unknown`` unless easy, medium or hard)."""
    return _KNOWN_DIFFICULTIES.get(str(metadata.get("difficulty", "unknown")), "unknown")


def fresh_folder(out: Path) -> None:
    """Make `out` an empty folder (an existing folder is replaced; a file or link there is an error)."""
    if out.is_symlink() or out.is_file():
        raise ConfigError(f"{out} exists and is not a folder")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)


def reproducible_tar_gz(files: Iterable[tuple[str, Path]]) -> bytes:
    """A ``.tar.gz`` of (archive name, source file) pairs: same bytes for the same files (mtime 0, root-owned)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, source in files:
            data = source.read_bytes()
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as packed:
        packed.write(raw.getvalue())
    return out.getvalue()


#: How exported images are built. ``offline``: ``FROM`` the local base image
#: (``envpipeline/base:bookworm``, `make base-image`), the runtime copied in, for machines with no
#: registry. ``portable``: ``FROM`` a public image (`PORTABLE_BASE_IMAGE`) with exact ``pip install``
#: pins of the runtime's third-party dependencies (no compiled file is shipped), runnable by any
#: Harbor installation that can pull from Docker Hub and PyPI.
HarborMode = Literal["offline", "portable"]
HARBOR_MODES: tuple[HarborMode, ...] = ("offline", "portable")
#: The public image of portable exports, pinned by tag (its CPython minor matches the runtime's).
PORTABLE_BASE_IMAGE = "python:3.11-slim"
#: The distributions a composed environment imports (pydantic and its runtime dependencies).
RUNTIME_DISTRIBUTIONS = (
    "pydantic",
    "pydantic-core",
    "annotated-types",
    "typing-inspection",
    "typing-extensions",
)

#: Harbor's separate-verifier mode, as harbor 0.26.0 reads it (harbor/models/task/config.py,
#: ``VerifierConfig.environment_mode``; harbor/models/task/verifier_mode.py,
#: ``resolve_verifier_environment_definition``): with ``[verifier] environment_mode = "separate"``
#: the verifier runs in its own container; a ``tests/Dockerfile`` makes that container's image,
#: built from ``tests/`` (the tests are baked in, at ``/tests``), and every ``artifacts`` entry
#: collected from the agent's container is re-materialized there at its original path.
SEPARATE_VERIFIER = "separate"


def base_image(mode: HarborMode) -> str:
    """The ``FROM`` image of an export in `mode`."""
    from envpipeline.sandbox.base import BASE_IMAGE

    if mode not in HARBOR_MODES:
        raise ConfigError(f"unknown Harbor export mode {mode!r}: one of {', '.join(HARBOR_MODES)}")
    return PORTABLE_BASE_IMAGE if mode == "portable" else BASE_IMAGE


def runtime_pins() -> list[str]:
    """``name==version`` of every `RUNTIME_DISTRIBUTIONS` member, as installed here (the tested set)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return [f"{name}=={version(name)}" for name in RUNTIME_DISTRIBUTIONS]
    except PackageNotFoundError as e:  # pragma: no cover - pydantic is a core dependency
        raise ConfigError(f"cannot pin the runtime: {e} is not installed") from e


def pip_install_line(pins: Iterable[str]) -> str:
    """A Dockerfile ``RUN`` installing exact pins (no cache, no compiled file of ours)."""
    return "RUN python3 -m pip install --no-cache-dir " + " ".join(pins) + "\n"


def agent_dockerfile(mode: HarborMode, pins: Iterable[str] = (), env: Mapping[str, str] | None = None) -> str:
    """The agent image: the mode's base, optional pinned packages, ``environment/app/`` at ``/app``."""
    lines = f"FROM {base_image(mode)}\n"
    pins = list(pins)
    if pins and mode == "portable":
        lines += pip_install_line(pins)
    lines += "".join(f"ENV {key}={value}\n" for key, value in sorted((env or {}).items()))
    return lines + "WORKDIR /app\nCOPY app/ /app/\n"


def verifier_dockerfile(mode: HarborMode, pins: Iterable[str] = ()) -> str:
    """The separate verifier's image (``tests/Dockerfile``): the mode's base and ``tests/`` at ``/tests``.

    Harbor runs ``/tests/test.sh`` there after re-materializing the collected artifacts; the
    image holds no ``/app``, so the verifier sees exactly what the agent left.
    """
    lines = f"FROM {base_image(mode)}\n"
    pins = list(pins)
    if pins and mode == "portable":
        lines += pip_install_line(pins)
    return lines + "COPY . /tests/\nWORKDIR /tests\n"
