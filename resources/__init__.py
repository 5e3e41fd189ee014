"""Dagster resources wrapping envpipeline core objects (store, composer)."""
