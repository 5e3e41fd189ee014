"""The resources of each deployment: one table, chosen once by the composition root (`assets/definitions.py`).

- ``local``: a laptop; bundles run in Docker when an engine answers, else in the local sandbox.
- ``docker``: a machine with a Docker engine; bundles always run in Docker.
- ``cluster``: several machines sharing one data folder; bundles run in Docker, and the data
  folder must be given explicitly (an absolute path every machine mounts).

Every deployment runs the same assets with the same code; only these resources differ.
"""

from enum import StrEnum
from pathlib import Path
from typing import Any

from envpipeline.errors import ConfigError
from envpipeline.sandbox.detect import SandboxBackend
from resources.composer import ComposerResource
from resources.forge import ForgeResource
from resources.sandbox import SandboxResource
from resources.store import LakeResource
from resources.worlds import WorldsResource


class Deployment(StrEnum):
    """Where the pipeline runs."""

    LOCAL = "local"
    DOCKER = "docker"
    CLUSTER = "cluster"


#: The sandbox backend of each deployment (AUTO = detect: Docker if the engine answers, else local).
SANDBOX_BACKEND = {
    Deployment.LOCAL: SandboxBackend.AUTO,
    Deployment.DOCKER: SandboxBackend.DOCKER,
    Deployment.CLUSTER: SandboxBackend.DOCKER,
}


def deployment_resources(deployment: Deployment | str, home: str | Path | None) -> dict[str, Any]:
    """The resources of one deployment over the data folder `home` (default ./data, except on a cluster)."""
    try:
        deployment = Deployment(deployment)
    except ValueError as e:
        known = ", ".join(d.value for d in Deployment)
        raise ConfigError(f"unknown deployment {deployment!r}; known: {known}") from e
    if home is None:
        if deployment is Deployment.CLUSTER:
            raise ConfigError("a cluster deployment needs its shared data folder: set ENVPIPELINE_HOME")
        home = "data"
    return {
        "store": LakeResource(home=str(Path(home).resolve())),
        "composer": ComposerResource(),
        "sandbox": SandboxResource(backend=SANDBOX_BACKEND[deployment]),
        "forge": ForgeResource(),
        "worlds": WorldsResource(),
    }
