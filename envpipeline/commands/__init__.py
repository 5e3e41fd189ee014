"""Sub-command groups of the `envpipeline` CLI."""
