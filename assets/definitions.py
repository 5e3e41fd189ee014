"""The single Definitions of the project (loaded by workspace.yaml)."""


from dagster import AssetSelection, Definitions, define_asset_job

from assets.catalog import catalog
from assets.compose import (
    accepted_tasks_meet_rubric_floor,
    composed_rollouts,
    composed_task_specs,
    rollouts_are_consistent,
    service_contract_passes,
    service_library,
    verified_composed_tasks,
)
from resources.composer import ComposerResource
from resources.store import LakeResource

library_job = define_asset_job(
    "library_job", selection=AssetSelection.assets(service_library), description="Build and test the service library."
)
compose_batch_job = define_asset_job(
    "compose_batch_job",
    selection=AssetSelection.assets(composed_task_specs, verified_composed_tasks, composed_rollouts),
    description="Draft, verify and roll out one composition batch.",
)
catalog_job = define_asset_job("catalog_job", selection=AssetSelection.assets(catalog), description="Refresh views.")

defs = Definitions(
    assets=[service_library, composed_task_specs, verified_composed_tasks, composed_rollouts, catalog],
    asset_checks=[service_contract_passes, accepted_tasks_meet_rubric_floor, rollouts_are_consistent],
    jobs=[library_job, compose_batch_job, catalog_job],
    resources={"store": LakeResource(), "composer": ComposerResource()},
)
