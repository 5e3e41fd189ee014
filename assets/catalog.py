"""The DuckDB catalog asset: one serialized writer (pool of size 1) over the whole lake."""

from dagster import AssetExecutionContext, MaterializeResult, MetadataValue, asset

from assets.automation import FRESH
from assets.compose import composed_rollouts, composed_task_specs, service_library, verified_composed_tasks
from assets.datasets import accepted_tasks
from assets.forge import seed_pass_rates, selector_decisions, synthesized_bundles, verified_bundles
from assets.terminal import seed_verification, terminal_seeds
from assets.worlds import gated_world_tasks, persona_worlds, personas, world_tasks
from envpipeline.compose.recording import CODE_VERSION
from resources.store import LakeResource

CATALOG_POOL = "duckdb_catalog"


@asset(
    automation_condition=FRESH,
    group_name="store",
    deps=[
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
        personas,
        persona_worlds,
        world_tasks,
        gated_world_tasks,
        accepted_tasks,
    ],
    pool=CATALOG_POOL,
    code_version=CODE_VERSION,
    kinds={"duckdb"},
)
def catalog(context: AssetExecutionContext, store: LakeResource) -> MaterializeResult:
    """Create or replace one DuckDB view per asset over its Parquet partitions."""
    views = store.refresh_catalog()
    lake = store.lake()
    counts = {view: lake.count_rows(view) for view in views}
    context.log.info(f"catalog views: {counts}")
    return MaterializeResult(
        metadata={
            "views": MetadataValue.json(counts),
            "path": MetadataValue.path(f"{store.home}/catalog.duckdb"),
        }
    )
