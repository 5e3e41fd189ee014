"""Composing over the whole library (the imported MCP corpus too) drafts and gates every seed."""

from __future__ import annotations

from envpipeline.compose.author import ComposeConfig
from envpipeline.compose.pipeline import compose_task


def test_composing_over_the_whole_library_gives_every_seed_a_record():
    """Imported services bring shapes the curated library lacks (integer ids, nested records);
    seeds 23 and 27 plant a twin in an integer-id collection, which crashed the whole run."""
    config = ComposeConfig(library_scope="all")
    records = [compose_task(seed, config, "scope-all") for seed in range(40)]
    assert len(records) == 40
    accepted = [r for r in records if r.status == "accepted"]
    assert accepted, "no task over the whole library was accepted"
    assert any(
        not s.tool.startswith(("banking.", "calendar.", "chat.", "crm.", "files.", "flights."))
        for r in accepted
        for s in r.reference_solution
    )
