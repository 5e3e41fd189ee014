"""Agent-facing environments, meta-tools, trajectories and offline policies."""
