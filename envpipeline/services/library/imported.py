"""Services imported from MCP tool specs (``envpipeline/services/specs/*.json``).

``issues`` (an issue tracker) and ``expenses`` (travel expenses) are synthesized at import time by
`envpipeline.services.mcp_import.synthesize_service`; tools that fit no CRUD shape
(``summarize_thread``, ``convert_currency_live``, ``lookup_per_diem``) are simulated by the offline
world model.
"""

from __future__ import annotations

import json
from importlib import resources

from envpipeline.services.mcp_import import synthesize_service
from envpipeline.services.registry import register_service

SPECS = resources.files("envpipeline.services") / "specs"


def load_spec(filename: str) -> object:
    """One shipped ``tools/list`` payload, parsed."""
    return json.loads((SPECS / filename).read_text(encoding="utf-8"))


IssuesService = register_service(
    synthesize_service("issues", load_spec("issue_tracker.json"), title="Issue Tracker", domain="software")
)
ExpensesService = register_service(
    synthesize_service(
        "expenses", load_spec("travel_expenses.json"), title="Travel Expenses", domain="finance"
    )
)
