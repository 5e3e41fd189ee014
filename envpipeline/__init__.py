"""envpipeline: a factory of verified training environments for LLM agents."""

from envpipeline.versions import PACKAGE as __version__

__all__ = ["__version__"]
