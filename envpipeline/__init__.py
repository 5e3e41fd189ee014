"""envpipeline: a factory of verified training environments for LLM agents."""

__version__ = "0.1.0"
