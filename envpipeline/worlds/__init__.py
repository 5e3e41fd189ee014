"""WildAWM worlds: persona-driven, multi-day personal-computer worlds (pure core, no dagster).

Layout: ``<root>/<persona_id>/day-dd/{home/, apps/<app>.sqlite, delta.json, manifest.json}``.
Modules: `worldstore` (the apps' reads and writes and the calendar, stdlib only: Harbor exports ship
it as-is), `schema` (SQLite schemas, frozen time), `genesis` (day 00), `personas` (generator +
diversity judge), `skills` (event-creation skills), `planner` (day plans), `delta` (apply/lint),
`state` (reader, canonical dump, hash, diff), `build` (build_world + verification checks),
`templates` (task templates) written with `task_builder`, `tasks` (generation), `agents` (scripted
agents), `verifier` and `gates`, `pipeline` (end to end).
"""

from envpipeline.worlds.schema import ALL_APPS, APPS, BASE_DATE, FILES_APP, FIXED_SALT

__all__ = ["ALL_APPS", "APPS", "BASE_DATE", "FILES_APP", "FIXED_SALT"]
