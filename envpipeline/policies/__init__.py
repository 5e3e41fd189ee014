"""Policies: scripted, content-sensitive solvers, LLM agents and recorded rollouts (see `base`)."""
