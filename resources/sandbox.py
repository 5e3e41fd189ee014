"""The sandbox backend as a Dagster resource."""

from dagster import ConfigurableResource
from pydantic import Field

from envpipeline.sandbox.base import Sandbox
from envpipeline.sandbox.detect import SandboxBackend, select_sandbox
from envpipeline.sandbox.fingerprint import environment_fingerprint


class SandboxResource(ConfigurableResource):
    """Which sandbox runs bundle code: "" = auto ($ENVPIPELINE_SANDBOX, Docker, else local)."""

    backend: SandboxBackend = Field(
        default=SandboxBackend.AUTO, description="local, docker, or empty for automatic detection"
    )

    def get(self) -> Sandbox:
        """The selected sandbox backend."""
        return select_sandbox(self.backend or None)

    def fingerprint(self) -> str:
        """The environment fingerprint verdicts depend on (base image / host toolchain)."""
        return environment_fingerprint(self.get())
