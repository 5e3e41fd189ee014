"""Parquet lake with atomic per-partition files, a DuckDB catalog of views, and lineage."""
