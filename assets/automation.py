"""Declarative automation: the graph keeps itself fresh under the daemon.

When a seed is added (a terminal seed folder, a composition batch, a persona) or re-verified, the
assets below it are re-materialized without anyone launching a job: every derived asset carries
`FRESH`, Dagster's `eager()` condition (run when a dependency updated or a partition newly
appeared, once no dependency is missing or in progress, never twice for one update) joined with
`outside_plans`, and `freshness_sensor` evaluates them every FRESHNESS_INTERVAL_SEC. The sensor is
on by default, so `make ui` (its Automation tab) shows each evaluation and the runs it requested.

`outside_plans` holds everything back while `envpipeline run` works (`assets.plan_lease`):
the plan materializes the whole graph itself, and requests made between two of its stages would
duplicate runs it is about to submit. What updated meanwhile is remembered by `eager()` and handled
by the plan's own materializations, so a finished plan leaves nothing for the sensor to redo.

`selector_decisions` is left to `forge_reselect_sensor` (one MILP after a whole batch of pass-rate
runs); the forge bundles below it follow its updates here.

The condition runs Python, so the sensor is evaluated in the code server (`use_user_code_server`),
as Dagster's guide to arbitrary Python automation conditions describes
(docs.dagster.io/guides/automate/declarative-automation/customizing-automation-conditions/
arbitrary-python-automation-conditions).
"""

from __future__ import annotations

from dagster import (
    AssetSelection,
    AutomationCondition,
    AutomationConditionSensorDefinition,
    AutomationContext,
    AutomationResult,
    DefaultSensorStatus,
)

from assets.plan_lease import plan_in_progress
from assets.sensor_intervals import sensor_interval

FRESHNESS_INTERVAL_SEC = sensor_interval(30)
#: Tag of every run the freshness sensor requests (beside Dagster's own automation tags).
FRESHNESS_TAG = "envpipeline/freshness"


class OutsidePlans(AutomationCondition):
    """True for every candidate unless an `envpipeline run` plan holds the instance's plan lease
    or has runs queued or running."""

    @property
    def name(self) -> str:
        return "outside_plans"

    @property
    def description(self) -> str:
        return "no `envpipeline run` plan is in progress"

    def evaluate(self, context: AutomationContext) -> AutomationResult:
        busy = plan_in_progress(context.asset_graph_view.instance)
        return AutomationResult(context, context.get_empty_subset() if busy else context.candidate_subset)


outside_plans = OutsidePlans()
#: The automation condition of every derived asset (the condition is evaluated left to right:
#: `eager()` first, so that what it remembers stays current while a plan holds the sensor back).
FRESH = (AutomationCondition.eager() & outside_plans).with_label("eager, outside plans")


def freshness_sensor(targets: AssetSelection) -> AutomationConditionSensorDefinition:
    """The sensor that evaluates `FRESH` on `targets` (on by default)."""
    return AutomationConditionSensorDefinition(
        "freshness_sensor",
        target=targets,
        default_status=DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=FRESHNESS_INTERVAL_SEC,
        use_user_code_server=True,
        run_tags={FRESHNESS_TAG: "1"},
        description="Re-materialize what a new or re-verified seed makes stale (declarative automation).",
    )
