"""The verifiers 0.4 taskset id of our RL rows: ``--env.taskset.id envpipeline-verifiers``.

verifiers resolves a taskset id to a top-level module exporting one ``Taskset`` subclass in
``__all__`` (``verifiers/v1/utils/loaders.py``); dotted module paths are not accepted, hence this
one-line package. The classes live in `envpipeline.trainers.verifiers_env` (built on first access).
"""

from typing import Any

from envpipeline.trainers import verifiers_env

__all__ = ["EnvpipelineTaskset"]


def __getattr__(name: str) -> Any:
    return getattr(verifiers_env, name)
