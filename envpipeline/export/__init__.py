"""Training datasets, reward adapters and exports (verl, TRL, SkyRL, Harbor, MCP)."""
