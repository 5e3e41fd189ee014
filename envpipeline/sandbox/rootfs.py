"""The base image's root filesystem on disk: what the local sandbox runs on instead of the host's ``/usr``.

Where a Docker engine has the base image, its tree comes from ``docker create`` + ``docker export``
(offline, a few seconds); elsewhere ``mmdebstrap`` builds the same Debian tree from the package
list that ``scripts/build-base-image.sh`` reads too (``base-packages.txt`` beside this module),
with the same ``ENV``/``WORKDIR`` (`BASE_IMAGE_CONFIG`). Each tree is cached once per image id or
package-list version::

    $XDG_CACHE_HOME/envpipeline/rootfs/
        docker-<image id[:16]>/      (or debian-<version>/)
            fs/                      the image's root: /usr, /etc, /bin -> usr/bin, /app, ...
            image.json               ImageConfig: the image's ENV, WORKDIR, where the tree came from

A tree is unpacked into a temp folder beside its final name and renamed into place, so a killed
build never leaves half a tree under a name that `find_rootfs` would use, and two builders racing
keep the first. ``ENVPIPELINE_ROOTFS`` overrides the lookup: a cached folder, or ``host`` for the
host's ``/usr`` (what the sandbox falls back to, and says so, when no tree exists).

Run ``python -m envpipeline.sandbox.rootfs`` (``make base-rootfs``) to build it ahead of time.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from envpipeline.errors import SandboxError
from envpipeline.sandbox.base import BASE_IMAGE

logger = logging.getLogger(__name__)

#: Environment variable naming a cached rootfs folder to use, or ``host`` for the host's /usr.
ROOTFS_VAR = "ENVPIPELINE_ROOTFS"
#: The Debian packages of the base image (shared with scripts/build-base-image.sh).
PACKAGE_LIST = Path(__file__).with_name("base-packages.txt")
#: Folders every tree must have: the session mounts, /proc and /dev, and /var/tmp (bound to /tmp).
MOUNTPOINTS = ("app", "logs", "tests", "solution", "tmp", "proc", "dev", "var/tmp")
#: Seconds a ``docker export`` or an ``mmdebstrap`` run may take.
BUILD_TIMEOUT_SEC = 1800.0
#: The mmdebstrap options of scripts/build-base-image.sh (minbase, no recommends, no docs).
MMDEBSTRAP_OPTIONS = (
    "--variant=minbase",
    '--aptopt=Acquire::Retries "3"',
    '--aptopt=APT::Install-Recommends "false"',
    "--dpkgopt=path-exclude=/usr/share/man/*",
    "--dpkgopt=path-exclude=/usr/share/doc/*",
    "--dpkgopt=path-include=/usr/share/doc/*/copyright",
    "--dpkgopt=path-exclude=/usr/share/info/*",
    "--dpkgopt=path-exclude=/usr/share/locale/*",
    '--customize-hook=rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin "$1"/var/log/*.log',
    # as scripts/build-base-image.sh: no PEP 668 marker, so a task's `pip install` works as on python:3.x
    '--customize-hook=rm -f "$1"/usr/lib/python3*/EXTERNALLY-MANAGED',
)


class ImageConfig(BaseModel):
    """What a container of the image starts with, beside its files (Docker's ``Config``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    image: Annotated[str, Field(description="the image name the tree stands for")]
    image_id: Annotated[str, Field(description="Docker's image id, or the package-list version")]
    source: Annotated[
        Literal["docker-export", "mmdebstrap", "declared"],
        Field(description="where the tree came from ('declared': no tree, the script's values)"),
    ]
    env: Annotated[dict[str, str], Field(description="the image's ENV, the start of every session's")]
    workdir: Annotated[str, Field(description="the image's WORKDIR (Docker's default: /)")] = "/"


#: The ENV and WORKDIR `scripts/build-base-image.sh` gives the image (its ``docker import --change``
#: lines; a unit test keeps the two in step). Used for mmdebstrap trees and as the host fallback.
BASE_IMAGE_CONFIG = ImageConfig(
    image=BASE_IMAGE,
    image_id="",
    source="declared",
    env={
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    },
    workdir="/app",
)


class RootFilesystem(BaseModel):
    """A cached tree and the config of the image it was taken from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    folder: Annotated[Path, Field(description="the cache folder holding fs/ and image.json")]
    config: ImageConfig

    @property
    def tree(self) -> Path:
        """The root of the image's files (bound read-only at / of every session)."""
        return self.folder / "fs"


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/envpipeline/rootfs`` (``~/.cache`` without XDG_CACHE_HOME)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "envpipeline" / "rootfs"


def base_packages() -> list[str]:
    """The package names of `PACKAGE_LIST` (comments and blank lines dropped)."""
    names = (line.split("#", 1)[0].strip() for line in PACKAGE_LIST.read_text().splitlines())
    return [name for name in names if name]


def debian_version() -> str:
    """The cache key of an mmdebstrap tree: the package list and options, hashed."""
    text = "\n".join([*base_packages(), *MMDEBSTRAP_OPTIONS, BASE_IMAGE_CONFIG.model_dump_json()])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _owned_by_us(path: Path) -> bool:
    """A cached tree is trusted only when this user owns it and nobody else may write it."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022


def load(folder: Path) -> RootFilesystem | None:
    """The cached tree in `folder`, or None when it is absent, incomplete or not ours alone."""
    config_file = folder / "image.json"
    if not (_owned_by_us(folder) and _owned_by_us(folder / "fs") and config_file.is_file()):
        return None
    try:
        config = ImageConfig.model_validate_json(config_file.read_text())
    except (OSError, ValidationError):
        return None
    return RootFilesystem(folder=folder, config=config)


def _docker(*args: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str] | None:
    """A docker CLI call (None when the CLI is missing or hangs)."""
    try:
        return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None


def docker_image_config(image: str = BASE_IMAGE) -> ImageConfig | None:
    """The image's id, ENV and WORKDIR from ``docker image inspect`` (None: no engine or no image)."""
    inspected = _docker(
        "image", "inspect", "-f", "{{.Id}}\t{{json .Config.Env}}\t{{.Config.WorkingDir}}", image
    )
    if inspected is None or inspected.returncode != 0:
        return None
    image_id, env_json, workdir = inspected.stdout.rstrip("\n").split("\t")
    pairs = [item.partition("=") for item in _json_list(env_json)]
    return ImageConfig(
        image=image,
        image_id=image_id,
        source="docker-export",
        env={name: value for name, _, value in pairs},
        workdir=workdir or "/",
    )


def _json_list(text: str) -> list[str]:
    """The strings of a JSON list (Docker prints ``null`` for an image without ENV)."""
    value = json.loads(text)
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _finish(staging: Path, final: Path, config: ImageConfig) -> RootFilesystem:
    """Add the mount points and image.json to a staged tree and rename it into place."""
    tree = staging / "fs"
    for name in MOUNTPOINTS:
        (tree / name).mkdir(parents=True, exist_ok=True)
    os.chmod(tree / "tmp", 0o1777)
    (staging / "image.json").write_text(config.model_dump_json(indent=2) + "\n")
    os.chmod(tree, 0o755)
    os.chmod(staging, 0o755)
    try:
        os.rename(staging, final)
    except OSError:  # another builder finished first: keep theirs
        shutil.rmtree(staging, ignore_errors=True)
    found = load(final)
    if found is None:
        raise SandboxError(f"{final}: the root filesystem is incomplete or not owned by this user")
    return found


def _staging(root: Path) -> Path:
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=".staging-", dir=root))


def docker_folder(config: ImageConfig, root: Path | None = None) -> Path:
    """Where the tree of a Docker image is cached: ``<root>/docker-<image id[:16]>``."""
    return (root or cache_root()) / f"docker-{config.image_id.removeprefix('sha256:')[:16]}"


def export_docker_image(config: ImageConfig, root: Path | None = None) -> RootFilesystem:
    """``docker create`` + ``docker export`` the image into ``<root>/docker-<id>/`` (cached)."""
    root = root or cache_root()
    final = docker_folder(config, root)
    if (found := load(final)) is not None:
        return found
    created = _docker("create", config.image, "/bin/true")
    if created is None or created.returncode != 0:
        raise SandboxError(f"docker create {config.image} failed: {created.stderr if created else 'no CLI'}")
    container = created.stdout.strip()
    staging = _staging(root)
    try:
        (staging / "fs").mkdir()
        with subprocess.Popen(["docker", "export", container], stdout=subprocess.PIPE) as export:
            untar = subprocess.run(
                ["tar", "-x", "--numeric-owner", "-p", "-C", str(staging / "fs"), "-f", "-"],
                stdin=export.stdout,
                capture_output=True,
                timeout=BUILD_TIMEOUT_SEC,
            )
            if export.stdout is not None:  # a tar that stopped early must not leave docker blocked
                export.stdout.close()
            exported = export.wait(timeout=60)
        if exported != 0 or untar.returncode != 0:
            raise SandboxError(f"docker export {config.image} failed: {untar.stderr.decode()[-500:]}")
        (staging / "fs" / ".dockerenv").unlink(missing_ok=True)
        return _finish(staging, final, config)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        _docker("rm", "-f", container)


def mmdebstrap_argv(target: Path, mirror: str) -> list[str]:
    """The mmdebstrap command that builds the base image's tree into `target`."""
    return [
        "mmdebstrap",
        *MMDEBSTRAP_OPTIONS,
        f"--include={','.join(base_packages())}",
        "bookworm",
        str(target),
        mirror,
    ]


def build_with_mmdebstrap(root: Path | None = None, mirror: str | None = None) -> RootFilesystem:
    """Build the tree from the Debian mirror into ``<root>/debian-<version>/`` (cached; needs root)."""
    root = root or cache_root()
    version = debian_version()
    final = root / f"debian-{version}"
    if (found := load(final)) is not None:
        return found
    if shutil.which("mmdebstrap") is None:
        raise SandboxError(
            "mmdebstrap is missing: apt-get install mmdebstrap (or build the Docker base image)"
        )
    staging = _staging(root)
    try:
        argv = mmdebstrap_argv(
            staging / "fs", mirror or os.environ.get("DEBIAN_MIRROR", "http://deb.debian.org/debian")
        )
        built = subprocess.run(argv, capture_output=True, text=True, timeout=BUILD_TIMEOUT_SEC)
        if built.returncode != 0:
            raise SandboxError(f"mmdebstrap failed: {built.stderr[-1000:]}")
        config = BASE_IMAGE_CONFIG.model_copy(
            update={"image_id": f"debian-{version}", "source": "mmdebstrap"}
        )
        return _finish(staging, final, config)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def find_rootfs(image: str = BASE_IMAGE, export: bool = True) -> RootFilesystem | None:
    """The tree the local sandbox should run on, or None for the host's /usr.

    ``$ENVPIPELINE_ROOTFS`` wins (a cached folder, or ``host``); then the Docker image's tree
    (exported now when `export` and the engine has the image); then an mmdebstrap tree.
    """
    chosen = os.environ.get(ROOTFS_VAR, "").strip()
    if chosen == "host":
        return None
    if chosen:
        found = load(Path(chosen))
        if found is None:
            raise SandboxError(f"{ROOTFS_VAR}={chosen}: not a root filesystem folder (fs/ and image.json)")
        return found
    config = docker_image_config(image)
    if config is not None:
        if (found := load(docker_folder(config))) is not None:
            return found
        if export:
            try:
                return export_docker_image(config)
            except SandboxError as e:  # the host fallback names itself in every verdict
                logger.warning("cannot export %s for the local sandbox: %s", image, e)
    return load(cache_root() / f"debian-{debian_version()}")


#: Commands of the base image that tasks lean on most; the host fallback names those it lacks.
IMAGE_COMMANDS = ("bash", "python3", "git", "sqlite3", "jq", "curl", "unzip", "zip", "gawk")
#: The image's Python modules that tasks' tests need (probed with the host's /usr/bin/python3).
IMAGE_MODULES = ("pytest",)


@cache
def host_gaps() -> tuple[str, ...]:
    """What the base image has and the host's /usr lacks (commands, then Python modules)."""
    path = BASE_IMAGE_CONFIG.env["PATH"]
    missing = [name for name in IMAGE_COMMANDS if shutil.which(name, path=path) is None]
    python = shutil.which("python3", path=path)
    for module in IMAGE_MODULES:
        probe = None
        if python is not None:
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                probe = subprocess.run(
                    [python, "-c", f"import {module}"], capture_output=True, timeout=30, env={"PATH": path}
                )
        if probe is None or probe.returncode != 0:
            missing.append(module)
    return tuple(missing)


def host_notice() -> str:
    """The sentence a session on the host's /usr carries into its verdicts."""
    gaps = host_gaps()
    lacks = f": {', '.join(gaps)} missing" if gaps else ""
    return (
        f"host /usr stands in for the image {BASE_IMAGE}{lacks} "
        "(no root filesystem of the image: run `make base-rootfs`)"
    )


def from_notice(named: str | None, runs_on: str) -> tuple[str, ...]:
    """A notice when the Dockerfile's FROM names another image than the one whose files run."""
    if named is None or named == runs_on:
        return ()
    return (
        f"FROM {named}: the local sandbox runs the files of {runs_on} instead (Docker builds on {named})",
    )


def main(argv: list[str] | None = None) -> int:
    """Build (or find) the base image's tree: from Docker when it has the image, else mmdebstrap."""
    parser = argparse.ArgumentParser(prog="python -m envpipeline.sandbox.rootfs", description=main.__doc__)
    parser.add_argument(
        "--mmdebstrap", action="store_true", help="build from the Debian mirror even with Docker"
    )
    options = parser.parse_args(argv)
    config = None if options.mmdebstrap else docker_image_config()
    try:
        found = export_docker_image(config) if config is not None else build_with_mmdebstrap()
    except SandboxError as e:
        print(f"base rootfs: {e}", file=sys.stderr)
        return 1
    with contextlib.suppress(OSError):
        size = sum(p.lstat().st_size for p in found.tree.rglob("*"))
        print(f"base rootfs: {found.tree} ({found.config.source} of {found.config.image}, {size >> 20} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
