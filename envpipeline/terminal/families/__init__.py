"""Procedural terminal task families: one module each, one registry."""
