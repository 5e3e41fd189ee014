"""Re-selection after re-estimation: new pass rates always lead to one `selector_job` run.

`forge_refresh_schedule` re-estimates every seed's pass rate with the current policy (one
`pass_rate_job` run per seed); this sensor then requests one `selector_job` run once no pass-rate
run is pending and the newest `seed_pass_rates` materialization is newer than the newest
`selector_decisions` one, so the frontier moves with the policy. New and re-verified seeds get
their pass rates from the freshness automation (`assets.automation`), whose runs it waits for too;
it is the one owner of `selector_decisions`, which carries no automation condition.
"""

from dagster import (
    AssetKey,
    DefaultSensorStatus,
    RunRequest,
    RunsFilter,
    SensorEvaluationContext,
    SkipReason,
    sensor,
)

from assets.forge import pass_rate_job, selector_job
from assets.plan_lease import plan_in_progress
from assets.run_tags import PENDING
from assets.sensor_intervals import sensor_interval

#: Pass rates come from `pass_rate_job` runs (the refresh schedule) and from the freshness
#: automation's runs (`assets.automation`), which select the asset in an ad-hoc asset job.
RATES = AssetKey("seed_pass_rates")


def _newest(context: SensorEvaluationContext, asset: str) -> int | None:
    """Storage id of the newest materialization of `asset` (any partition), None if never."""
    records = context.instance.fetch_materializations(AssetKey(asset), limit=1).records
    return records[0].storage_id if records else None


@sensor(
    job=selector_job, minimum_interval_seconds=sensor_interval(60), default_status=DefaultSensorStatus.RUNNING
)
def forge_reselect_sensor(context: SensorEvaluationContext) -> RunRequest | SkipReason:
    """One re-selection after every batch of pass-rate runs (see the module docstring)."""
    if plan_in_progress(context.instance):
        return SkipReason("an `envpipeline run` plan is in progress; it materializes these assets itself")
    rates = _newest(context, "seed_pass_rates")
    if rates is None:
        return SkipReason("no pass rate estimated yet")
    pending = sum(
        run.job_name == pass_rate_job.name or RATES in (run.asset_selection or ())
        for run in context.instance.get_runs(RunsFilter(statuses=PENDING))
    )
    if pending:
        return SkipReason(f"waiting for {pending} pass-rate run(s)")
    selected = _newest(context, "selector_decisions")
    if selected is not None and selected > rates:
        return SkipReason("the selection is newer than every pass rate")
    return RunRequest(run_key=f"reselect:{rates}")
