"""Choosing a sandbox backend: an explicit name, else ``$ENVPIPELINE_SANDBOX``, else Docker, else local.

Automatic detection picks Docker only when the engine answers *and* the offline base image
exists (`make base-image`); otherwise bundles would fail to build, so it falls back to local.
"""

from __future__ import annotations

import importlib
import os
from enum import StrEnum

from envpipeline.errors import ConfigError
from envpipeline.sandbox.base import Sandbox

#: Environment variable naming the backend when no explicit name is given.
ENV_VAR = "ENVPIPELINE_SANDBOX"


class SandboxBackend(StrEnum):
    """The sandbox backends; ``AUTO`` detects (Docker with its base image, else local)."""

    AUTO = ""
    LOCAL = "local"
    DOCKER = "docker"


#: backend -> (module, class), imported only when the backend is chosen (Docker's client is heavy)
BACKEND_CLASSES: dict[SandboxBackend, tuple[str, str]] = {
    SandboxBackend.LOCAL: ("envpipeline.sandbox.local", "LocalSandbox"),
    SandboxBackend.DOCKER: ("envpipeline.sandbox.docker", "DockerSandbox"),
}
BACKENDS = tuple(b.value for b in BACKEND_CLASSES)


def _backend_class(name: str) -> type[Sandbox] | None:
    """The class of a backend, or None if its module cannot be imported here."""
    module_name, class_name = BACKEND_CLASSES[SandboxBackend(name)]
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    return getattr(module, class_name)


def base_image_present() -> bool:
    """Whether the offline base image exists (automatic detection skips Docker without it)."""
    import subprocess

    from envpipeline.sandbox.base import BASE_IMAGE

    try:
        probe = subprocess.run(["docker", "image", "inspect", BASE_IMAGE], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def _is_available(name: str) -> bool:
    cls = _backend_class(name)
    return cls is not None and cls.available()


def available_backends() -> list[str]:
    """The backends that can run here, in preference order (docker before local)."""
    return [name for name in ("docker", "local") if _is_available(name)]


def select_sandbox(name: SandboxBackend | str | None = None) -> Sandbox:
    """An explicit name wins, then ``$ENVPIPELINE_SANDBOX``, then Docker (engine + base image), else local.

    The first call of a process removes sessions that killed runs left behind (`reaper.reap_once`).
    """
    from envpipeline.sandbox import reaper

    reaper.reap_once()
    chosen = str(name or "") or os.environ.get(ENV_VAR) or None
    source = "--sandbox" if name else ENV_VAR
    if chosen is not None:
        chosen = chosen.strip().lower()
        if chosen not in BACKENDS:
            raise ConfigError(
                f"{source}: unknown sandbox backend '{chosen}'; choose one of {', '.join(BACKENDS)}"
            )
        cls = _backend_class(chosen)
        if cls is None or not cls.available():
            hint = (
                "start the Docker engine or use the local backend"
                if chosen == "docker"
                else "the local backend needs root plus bubblewrap (apt-get install bubblewrap) or unshare"
            )
            raise ConfigError(f"{source}: the {chosen} sandbox is not available here: {hint}")
        return cls()
    for candidate in ("docker", "local"):
        cls = _backend_class(candidate)
        if cls is not None and cls.available() and (candidate != "docker" or base_image_present()):
            return cls()
    raise ConfigError(
        "no sandbox backend is available: start a Docker engine, or run as root with bubblewrap installed"
    )
