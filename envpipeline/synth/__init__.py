"""Envs-FORGE synthesis: materialize a selected action on a seed bundle (procedural or LLM)."""
