"""The single Definitions of the project (loaded by workspace.yaml): the composition root.

The deployment (``ENVPIPELINE_DEPLOYMENT``: local, docker or cluster) and the data folder
(``ENVPIPELINE_HOME``) are read here once, as a Dagster code location reads its settings; every
run can override the data folder through its resource config.
"""

import os

from dagster import AssetSelection, Definitions, define_asset_job

from assets.automation import freshness_sensor
from assets.catalog import catalog
from assets.compose import (
    accepted_tasks_defeat_red_team,
    accepted_tasks_meet_rubric_floor,
    composed_rollouts,
    composed_task_specs,
    rollouts_are_consistent,
    service_contract_passes,
    service_library,
    verified_composed_tasks,
)
from assets.datasets import accepted_tasks, harbor_tasks, splits_do_not_leak, training_datasets
from assets.forge import (
    forge_bundle_job,
    forge_export,
    forge_export_has_target,
    forge_export_job,
    forge_refresh_schedule,
    pass_rate_job,
    seed_pass_rates,
    selector_decisions,
    selector_job,
    synthesized_bundles,
    verified_bundles,
    verified_bundles_defeat_red_team,
)
from assets.forge_sensors import forge_reselect_sensor
from assets.terminal import (
    no_quarantined_seeds,
    nop_scores_zero,
    oracle_scores_one,
    seed_verification,
    seeds_defeat_red_team,
    static_checks_pass,
    terminal_seeds,
)
from assets.terminal_sensors import (
    oracle_rot_schedule,
    reverification_sensor,
    seed_folder_sensor,
    seed_verification_job,
    terminal_seed_job,
)
from assets.worlds import (
    gated_tasks_cover_interfaces,
    gated_tasks_fail_careless_agents,
    gated_tasks_job,
    gated_tasks_resist_red_team,
    gated_world_tasks,
    persona_world_job,
    persona_worlds,
    personas,
    personas_job,
    world_checks_pass,
    world_tasks,
)
from resources.deployments import deployment_resources

library_job = define_asset_job(
    "library_job",
    selection=AssetSelection.assets(service_library),
    description="Build and test the service library.",
)
compose_batch_job = define_asset_job(
    "compose_batch_job",
    selection=AssetSelection.assets(composed_task_specs, verified_composed_tasks, composed_rollouts),
    description="Draft, verify and roll out one composition batch.",
)
seed_job = define_asset_job(
    "seed_job",
    selection=AssetSelection.assets(terminal_seeds, seed_verification, seed_pass_rates),
    description="One seed end to end: its bundle, static checks, gold verification and pass rate.",
)
catalog_job = define_asset_job(
    "catalog_job", selection=AssetSelection.assets(catalog), description="Refresh views."
)
datasets_job = define_asset_job(
    "datasets_job",
    selection=AssetSelection.assets(accepted_tasks, training_datasets, harbor_tasks),
    description="Collect accepted tasks of all families, write the training datasets and Harbor tasks.",
)
# the datasets job's parts, for `envpipeline run`: the two exports run side by side
accepted_tasks_job = define_asset_job(
    "accepted_tasks_job",
    selection=AssetSelection.assets(accepted_tasks),
    description="Collect accepted tasks of all families.",
)
training_datasets_job = define_asset_job(
    "training_datasets_job",
    selection=AssetSelection.assets(training_datasets),
    description="Write the training datasets (splits, trainer files, card) of the accepted tasks.",
)
harbor_tasks_job = define_asset_job(
    "harbor_tasks_job",
    selection=AssetSelection.assets(harbor_tasks),
    description="Write a Harbor task folder per accepted task.",
)

defs = Definitions(
    assets=[
        service_library,
        composed_task_specs,
        verified_composed_tasks,
        composed_rollouts,
        terminal_seeds,
        seed_verification,
        seed_pass_rates,
        selector_decisions,
        synthesized_bundles,
        verified_bundles,
        forge_export,
        personas,
        persona_worlds,
        world_tasks,
        gated_world_tasks,
        accepted_tasks,
        training_datasets,
        harbor_tasks,
        catalog,
    ],
    asset_checks=[
        service_contract_passes,
        accepted_tasks_defeat_red_team,
        accepted_tasks_meet_rubric_floor,
        rollouts_are_consistent,
        static_checks_pass,
        oracle_scores_one,
        nop_scores_zero,
        no_quarantined_seeds,
        seeds_defeat_red_team,
        verified_bundles_defeat_red_team,
        forge_export_has_target,
        world_checks_pass,
        gated_tasks_cover_interfaces,
        gated_tasks_resist_red_team,
        gated_tasks_fail_careless_agents,
        splits_do_not_leak,
    ],
    jobs=[
        library_job,
        compose_batch_job,
        terminal_seed_job,
        seed_job,
        seed_verification_job,
        pass_rate_job,
        selector_job,
        forge_bundle_job,
        forge_export_job,
        personas_job,
        persona_world_job,
        gated_tasks_job,
        datasets_job,
        accepted_tasks_job,
        training_datasets_job,
        harbor_tasks_job,
        catalog_job,
    ],
    # every asset carrying an automation condition (`assets.automation.FRESH`) is evaluated by it
    sensors=[
        seed_folder_sensor,
        reverification_sensor,
        forge_reselect_sensor,
        freshness_sensor(AssetSelection.all()),
    ],
    schedules=[oracle_rot_schedule, forge_refresh_schedule],
    resources=deployment_resources(
        os.environ.get("ENVPIPELINE_DEPLOYMENT", "local"), os.environ.get("ENVPIPELINE_HOME")
    ),
)
