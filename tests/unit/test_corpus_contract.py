"""Every shipped MCP spec (``specs/*.json`` and ``specs/corpus/*.json``) passes its contract.

This is the gate that lets `envpipeline.services.library.imported` register the corpus without
re-running the contract on every load. A synthesis that fails its contract is refused.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from envpipeline.errors import SpecError
from envpipeline.services.contract import check_service
from envpipeline.services.library.imported import corpus_files, load_spec, spec_meta, synthesize_file
from envpipeline.services.mcp_import import verified_service
from envpipeline.services.registry import all_services

SHIPPED = ["issue_tracker.json", "travel_expenses.json", *corpus_files()]


@pytest.mark.parametrize("filename", SHIPPED)
def test_shipped_spec_passes_its_contract(filename):
    assert check_service(synthesize_file(filename)) == []


@pytest.mark.parametrize("filename", corpus_files())
def test_corpus_spec_is_registered_and_records_its_source(filename):
    meta = spec_meta(load_spec(filename), filename)
    assert meta["service"] in all_services()
    source = meta.get("source", {})
    assert source.get("repo") or source.get("url"), f"{filename} records no source"


class FlakyWorldModel:
    """A world model that answers every call differently: its hops cannot be verified."""

    def __init__(self) -> None:
        self.calls = 0

    def simulate(self, service, tool, arguments, output_schema, *, state=None) -> dict[str, Any]:
        self.calls += 1
        return {"code": f"C-{self.calls}-{random.random()}"}


def test_a_service_failing_its_contract_is_refused_with_its_failures_listed():
    spec = {
        "tools": [
            {
                "name": "lookup_code",
                "description": "the code of a customer by email",
                "inputSchema": {
                    "type": "object",
                    "properties": {"email": {"type": "string"}},
                    "required": ["email"],
                },
                "outputSchema": {"type": "object", "properties": {"code": {"type": "string"}}},
            }
        ]
    }
    with pytest.raises(
        SpecError, match=r"service 'flaky' fails its contract \(\d+ failures\): lookup_code_lookup: revealed"
    ):
        verified_service("flaky", spec, FlakyWorldModel())
    assert "flaky" not in all_services()
    assert check_service(verified_service("steady", spec)) == []
