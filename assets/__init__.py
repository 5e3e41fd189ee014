"""The Dagster shell: assets, checks, jobs, sensors, schedules and the one Definitions."""
