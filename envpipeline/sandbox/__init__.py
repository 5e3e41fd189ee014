"""Sandboxes that run untrusted bundle code: Docker and local (bubblewrap/namespaces)."""
