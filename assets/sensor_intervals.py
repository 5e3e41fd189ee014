"""How often the sensors are evaluated: each sensor's own interval, or one set for the deployment.

`ENVPIPELINE_SENSOR_INTERVAL_SEC` replaces the interval of every sensor of the graph (the seeds
folder's, the freshness automation's, the re-selection's and the re-verification's: 30, 30, 60 and
300 s by default) where a deployment wants the graph to follow a new seed sooner, or to look less
often. The intervals belong to the definitions, so the variable is read when the code location
loads: set it where the daemon and the code server start (their environment, `make ui`).
"""

from __future__ import annotations

import os

from envpipeline.errors import ConfigError

VARIABLE = "ENVPIPELINE_SENSOR_INTERVAL_SEC"


def sensor_interval(default: int) -> int:
    """`default` seconds, or the deployment's `ENVPIPELINE_SENSOR_INTERVAL_SEC` when it is set."""
    raw = os.environ.get(VARIABLE, "").strip()
    if not raw:
        return default
    try:
        seconds = int(raw)
    except ValueError:
        raise ConfigError(f"{VARIABLE}={raw!r}: expected a whole number of seconds") from None
    if seconds < 1:
        raise ConfigError(f"{VARIABLE}={raw!r}: a sensor is evaluated at most once a second; use 1 or more")
    return seconds
