"""The plan lease: a heartbeat in the instance that holds sensors and automation back while a
plan (`envpipeline run`) works, seen by daemons on any host."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from dagster import DagsterInstance, RunsFilter

from assets.run_tags import PLAN_TAG, SUBMITTED

#: Key of the plan leases (plan id -> heartbeat, epoch seconds) in the instance's key-value store.
PLAN_LEASE_KEY = "envpipeline/plan_leases"
#: A plan renews its lease this often; a lease older than PLAN_LEASE_TTL_SEC is a dead plan's.
PLAN_LEASE_RENEW_SEC = 10.0
PLAN_LEASE_TTL_SEC = 60.0


def _leases(instance: DagsterInstance) -> dict[str, float]:
    raw = instance.run_storage.get_cursor_values({PLAN_LEASE_KEY}).get(PLAN_LEASE_KEY)
    try:
        leases = json.loads(raw) if raw else {}
    except json.JSONDecodeError:
        return {}
    return {str(k): float(v) for k, v in leases.items()} if isinstance(leases, dict) else {}


def write_lease(instance: DagsterInstance, plan_id: str, heartbeat: float | None) -> None:
    """Set (or with None drop) one plan's heartbeat; leases past their time-to-live are dropped.

    The leases share one key, read and written back without a lock: two plans writing at the same
    instant may drop one heartbeat, which that plan's next renewal (PLAN_LEASE_RENEW_SEC) restores.
    Meanwhile its pending runs still count as a plan in progress (`plan_in_progress`)."""
    now = time.time()
    leases = {k: v for k, v in _leases(instance).items() if now - v < PLAN_LEASE_TTL_SEC and k != plan_id}
    if heartbeat is not None:
        leases[plan_id] = heartbeat
    instance.run_storage.set_cursor_values({PLAN_LEASE_KEY: json.dumps(leases, sort_keys=True)})


@contextmanager
def plan_lease(instance: DagsterInstance, plan_id: str) -> Iterator[Callable[[], None]]:
    """Hold the instance's plan lease while a plan works; yields `renew`, to call every poll.

    Between two stages no run of the plan is pending, yet the plan is not over: sensors and the
    freshness automation must still hold back, or they launch the very runs the plan is about to
    submit. The lease is a heartbeat in the instance's key-value store, so a daemon on another
    host sees it too, and a plan killed without cleanup stops holding it after PLAN_LEASE_TTL_SEC."""
    last = [time.monotonic()]
    write_lease(instance, plan_id, time.time())

    def renew() -> None:
        if time.monotonic() - last[0] >= PLAN_LEASE_RENEW_SEC:
            last[0] = time.monotonic()
            write_lease(instance, plan_id, time.time())

    try:
        yield renew
    finally:
        write_lease(instance, plan_id, None)


def plan_in_progress(instance: DagsterInstance) -> bool:
    """A plan holds a live lease, or some plan's runs are queued or running (sensors and the
    freshness automation hold back while `envpipeline run` works)."""
    now = time.time()
    if any(now - heartbeat < PLAN_LEASE_TTL_SEC for heartbeat in _leases(instance).values()):
        return True
    # a run a plan created ahead and never submitted (NOT_STARTED) does not count: only a live
    # plan (which holds the lease) would submit it
    runs = instance.get_runs(filters=RunsFilter(statuses=SUBMITTED), limit=50)
    return any(PLAN_TAG in run.tags for run in runs)
