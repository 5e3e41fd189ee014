"""The lake and catalog as a Dagster resource."""

from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field

from envpipeline.store.catalog import refresh_catalog
from envpipeline.store.lake import Lake


class LakeResource(ConfigurableResource):
    """Parquet lake + DuckDB catalog under one home folder (set by the deployment or the run config)."""

    home: str = Field(description="data folder (absolute): lake/, catalog.duckdb, bundles/, worlds/")
    lake_uri: str | None = Field(
        default=None,
        description="where the Parquet lake lives instead of <home>/lake: a path, file:///..., "
        "s3://bucket/lake (pyarrow's S3, AWS_* credentials), memory://... (fsspec)",
    )

    def lake(self) -> Lake:
        """The lake under `home`."""
        return Lake(self.home, self.lake_uri)

    @property
    def bundles_root(self) -> Path:
        """Where seed bundles are written."""
        return Path(self.home) / "bundles" / "seeds"

    @property
    def seeds_folder(self) -> Path:
        """The folder the seed sensor watches for dropped-in bundles."""
        return Path(self.home) / "seeds"

    def refresh_catalog(self) -> list[str]:
        """Recreate the catalog views (the single serialized writer)."""
        return refresh_catalog(self.home, self.lake_uri)
