"""Pure pydantic data models (no I/O)."""
