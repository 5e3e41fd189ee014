"""Red-team policies, one module each; each registers itself on import."""
