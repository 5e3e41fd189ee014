"""The partitioned compose and terminal assets, with their checks, for in-process backfills.

The backfill daemon's iteration loads this module as its code location and the in-memory run
launcher loads it again (from `sys.modules`) to run each run, so its settings are read from the
environment when a run starts (`EnvVar`): ``BACKFILL_HOME`` (the data folder) and
``BACKFILL_CANDIDATES`` (candidates per composition batch). ``BACKFILL_EXECUTOR`` (read at import)
picks the executor: ``in_process`` (default: every step in the run's process) or ``multiprocess``
(Dagster's default, as `assets/definitions.py` runs: one child process per step).
"""

import os

from dagster import (
    BackfillPolicy,
    Definitions,
    EnvVar,
    in_process_executor,
    multiprocess_executor,
)

from assets.compose import (
    accepted_tasks_defeat_red_team,
    accepted_tasks_meet_rubric_floor,
    composed_rollouts,
    composed_task_specs,
    rollouts_are_consistent,
    verified_composed_tasks,
)
from assets.forge import seed_pass_rates
from assets.terminal import (
    no_quarantined_seeds,
    nop_scores_zero,
    oracle_scores_one,
    seed_verification,
    seeds_defeat_red_team,
    static_checks_pass,
    terminal_seeds,
)
from resources.composer import ComposerResource
from resources.forge import ForgeResource
from resources.sandbox import SandboxResource
from resources.store import LakeResource

HOME_ENV = "BACKFILL_HOME"
CANDIDATES_ENV = "BACKFILL_CANDIDATES"
EXECUTOR_ENV = "BACKFILL_EXECUTOR"


def backfill_resources() -> dict[str, object]:
    """The resources over the data folder and batch size the environment names."""
    return {
        "store": LakeResource(home=EnvVar(HOME_ENV)),
        "composer": ComposerResource(candidates_per_batch=EnvVar.int(CANDIDATES_ENV)),
        "sandbox": SandboxResource(backend="local"),
        "forge": ForgeResource(),
    }


PARTITIONED = [
    composed_task_specs,
    verified_composed_tasks,
    composed_rollouts,
    terminal_seeds,
    seed_verification,
    seed_pass_rates,
]
CHECKS = [
    accepted_tasks_defeat_red_team,
    accepted_tasks_meet_rubric_floor,
    rollouts_are_consistent,
    static_checks_pass,
    oracle_scores_one,
    nop_scores_zero,
    no_quarantined_seeds,
    seeds_defeat_red_team,
]
EXECUTOR = multiprocess_executor if os.environ.get(EXECUTOR_ENV) == "multiprocess" else in_process_executor

#: the assets as the project defines them (multi-run backfill policies)
defs = Definitions(assets=PARTITIONED, asset_checks=CHECKS, resources=backfill_resources(), executor=EXECUTOR)
#: the baseline: the same assets, one partition per backfill run (as before the policies)
one_run_per_partition = Definitions(
    assets=[
        a.with_attributes(backfill_policy=BackfillPolicy.multi_run(max_partitions_per_run=1))
        for a in PARTITIONED
    ],
    asset_checks=CHECKS,
    resources=backfill_resources(),
    executor=EXECUTOR,
)
