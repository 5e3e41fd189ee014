"""One exception tree for the whole core.

    EnvpipelineError
    ├── ConfigError            bad user input or configuration (CLI flags, files)
    ├── SpecError              a tool spec (MCP tools/list) that cannot become a service
    ├── ServiceError           a service that misbehaves (not a tool error: those are observations)
    ├── CompositionError       a composition request that cannot be satisfied
    ├── StoreError             lake or catalog problems
    │   └── UnknownTaskError   an id the store has never seen
    ├── SandboxError           sandbox setup or isolation problems
    ├── LLMError               an LLM endpoint that fails (connection, timeout, bad response) after retries
    └── MissingExtraError      an optional dependency the lean install left out (also an ImportError)

Tool failures inside an environment are *not* exceptions: a tool returns an error observation
(400/404/409) and the agent sees it. Rejected candidates are *not* exceptions either: they are
stored rows with reasons.
"""


class EnvpipelineError(Exception):
    """Base of every error raised by envpipeline."""


class ConfigError(EnvpipelineError):
    """Bad input or configuration; the message says what to change."""


class SpecError(EnvpipelineError):
    """A tool specification that cannot be turned into an executable service."""


class ServiceError(EnvpipelineError):
    """A service implementation that violates the service contract."""


class CompositionError(EnvpipelineError):
    """A composition request that cannot be satisfied."""


class PlantingError(CompositionError):
    """A link that cannot be planted on one candidate's state (a simulated answer without the value
    its hop reveals): that candidate fails with the reason, the run goes on."""


class StoreError(EnvpipelineError):
    """A problem reading or writing the Parquet lake or the DuckDB catalog."""


class UnknownTaskError(StoreError, KeyError):
    """A task id that is not in the store."""


class SandboxError(EnvpipelineError):
    """A sandbox that cannot be set up or would not be isolated."""


class LLMError(EnvpipelineError):
    """An LLM call that failed after its retries: connection, timeout or an unusable response."""


class MissingExtraError(EnvpipelineError, ImportError):
    """A module that needs an optional dependency the lean `pip install envpipeline` leaves out.

    The message names the missing module and the extra that brings it, e.g.
    ``envpipeline.store.lake needs duckdb: pip install 'envpipeline[cli]'``.
    """

    def __init__(self, extra: str, missing: ImportError, *, needed_by: str) -> None:
        module = missing.name or str(missing)
        super().__init__(
            f"{needed_by} needs {module}, an optional dependency: pip install 'envpipeline[{extra}]'",
            name=module,
        )
        self.extra = extra
