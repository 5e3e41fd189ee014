"""The Dagster shell: assets, checks, jobs, sensors, schedules and the one Definitions."""

import envpipeline.blas_threads  # noqa: F401  (one BLAS thread in every Dagster process, before numpy loads)
