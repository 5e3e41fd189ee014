"""The built-in service library: one module per service."""
