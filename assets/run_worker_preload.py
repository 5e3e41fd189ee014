"""What the warm launcher's fork server imports after the code location's module, once.

A run worker forked from that server starts with these modules imported, so a run spends its CPU
on its own work (`assets.warm_launcher`). Measured on the default job before this module: a warm
worker still spent about 1.5 s of CPU per run importing, on top of a run's work of 0.3-1 s:

- the instance's storage classes (SQLAlchemy, Alembic and Dagster's run, event-log and schedule
  storages), which Dagster imports only when a run opens the instance;
- Dagster's run-execution path (``dagster api execute_run``);
- what the assets import inside their bodies to keep the definitions quick to load: the world
  machinery (MCP SDK, web and MCP servers), the Docker sandbox backend (when its SDK is
  installed), pandas.

It then builds, once, what several kinds of run build first: the service library (about 2.5 s of
CPU: the imported services are synthesized from the shipped MCP corpus when the registry is first
read) and its tool schemas and fingerprint (the compose runs' lineage). The library is code and
shipped data; like the project's modules, a change to them reaches the run workers when the daemon
(and with it this server) starts again.

Importing never fails the server: a module that cannot be imported (a missing optional extra, a
storage of another deployment) is left to the run that needs it, and so is a warm-up that fails.
Last, ``gc.freeze()`` moves
everything imported so far out of the collector's reach, so that a forked worker's garbage
collections do not touch, and copy, the pages it shares with the server.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os

#: Modules the run workers import lazily (imported here once instead).
RUN_WORKER_MODULES = (
    "dagster._cli.api",
    "dagster._grpc.impl",
    "dagster._core.execution.api",
    "dagster._core.storage.local_compute_log_manager",
    "envpipeline.worlds.pipeline",
    "envpipeline.worlds.build",
    "envpipeline.worlds.llm.run",
    "envpipeline.worlds.llm.judge",
    "envpipeline.sandbox.docker",
    "envpipeline.synth.procedural",
    "pandas",
)
#: Functions (``module:function``) called once after the imports, for what they cache.
RUN_WORKER_WARM_UPS = (
    "envpipeline.services.registry:all_services",
    "envpipeline.services.summary:library_fingerprint",
)


def _instance_storage_modules() -> list[str]:
    """The modules of the storage classes named by the instance of ``DAGSTER_HOME``."""
    if not os.environ.get("DAGSTER_HOME"):
        return []
    from dagster._core.instance.ref import InstanceRef

    ref = InstanceRef.from_dir(os.environ["DAGSTER_HOME"])
    classes = (
        ref.storage_data,
        ref.run_storage_data,
        ref.event_storage_data,
        ref.schedule_storage_data,
        ref.compute_logs_data,
    )
    return [data.module_name for data in classes if data is not None]


def preload() -> None:
    with contextlib.suppress(Exception):
        modules = [*_instance_storage_modules(), *RUN_WORKER_MODULES]
        for name in modules:
            with contextlib.suppress(Exception):
                importlib.import_module(name)
        for target in RUN_WORKER_WARM_UPS:
            module, _, function = target.partition(":")
            with contextlib.suppress(Exception):
                getattr(importlib.import_module(module), function)()
    gc.freeze()


preload()
