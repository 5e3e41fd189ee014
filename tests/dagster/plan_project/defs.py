"""A tiny Dagster project for the run-queue tests: `letters` (one file per partition) and `summary`.

The `letters` run of a partition named in `fail_once` fails on its first attempt (a marker file
remembers it) and on every attempt for a partition named in `fail_always`; `sleep` slows every
`letters` run so that a test can kill the daemon while runs are in flight.
"""

import os
import time
from pathlib import Path

from dagster import (
    AssetExecutionContext,
    ConfigurableResource,
    Definitions,
    DynamicPartitionsDefinition,
    asset,
    define_asset_job,
)

LETTERS = DynamicPartitionsDefinition(name="letters")


class Folder(ConfigurableResource):
    path: str
    fail_once: list[str] = []
    fail_always: list[str] = []
    sleep: float = 0.0


def _write_atomically(target: Path, text: str) -> None:
    temp = target.with_suffix(".tmp")
    temp.write_text(text)
    os.replace(temp, target)


@asset(partitions_def=LETTERS)
def letters(context: AssetExecutionContext, folder: Folder) -> None:
    """Every partition of the run (one, or a range); `<key>.run` names the run that wrote `<key>.txt`,
    `<key>.nice` the niceness it ran at."""
    out = Path(folder.path)
    time.sleep(folder.sleep)
    for key in context.partition_keys:
        marker = out / f"failed-once-{key}"
        if key in folder.fail_always or (key in folder.fail_once and not marker.exists()):
            marker.touch()
            raise RuntimeError(f"letters[{key}] fails on purpose")
        _write_atomically(out / f"{key}.txt", key.upper())
        _write_atomically(out / f"{key}.run", context.run.run_id)
        _write_atomically(out / f"{key}.nice", str(os.nice(0)))  # the worker's niceness


@asset(deps=[letters])
def summary(folder: Folder) -> None:
    out = Path(folder.path)
    _write_atomically(out / "summary.txt", "".join(p.read_text() for p in sorted(out.glob("?.txt"))))


defs = Definitions(
    assets=[letters, summary],
    jobs=[
        define_asset_job("letters_job", selection=[letters]),
        define_asset_job("summary_job", selection=[summary]),
    ],
    resources={"folder": Folder(path=os.environ.get("PLAN_TEST_FOLDER", "/nonexistent"))},
)
