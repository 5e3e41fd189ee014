"""Composing over the whole library (the imported MCP corpus too) drafts and gates every seed."""

from __future__ import annotations

from envpipeline.compose import gates
from envpipeline.compose.author import WHOLE_LIBRARY_DRAWS, ComposeConfig, draft_task
from envpipeline.compose.pipeline import compose_task
from tests.world_models import installed_world_model


def test_composing_over_the_whole_library_gives_every_seed_a_record():
    """Imported services bring shapes the curated library lacks (integer ids, nested records);
    seeds 23 and 27 plant a twin in an integer-id collection, which crashed the whole run (one
    draw of services each, as then: more draws would take those seeds elsewhere)."""
    config = ComposeConfig(library_scope="all", service_draws=1)
    records = [compose_task(seed, config, "scope-all") for seed in range(40)]
    assert len(records) == 40
    accepted = [r for r in records if r.status == "accepted"]
    assert accepted, "no task over the whole library was accepted"
    assert any(
        not s.tool.startswith(("banking.", "calendar.", "chat.", "crm.", "files.", "flights."))
        for r in accepted
        for s in r.reference_solution
    )


def test_a_whole_library_candidate_draws_services_again_until_a_typed_flow_links_them():
    """Over 114 services some sets of five share no typed data flow: with one draw about one seed
    in six is rejected as not composable (half before the wider carriers, 70% before the listing
    hops), with the default draws almost none are. The curated
    library keeps one draw (its records stay as they were), and an explicit setting wins."""
    assert ComposeConfig().draws() == 1
    assert ComposeConfig(library_scope="all").draws() == WHOLE_LIBRARY_DRAWS > 1
    assert ComposeConfig(library_scope="all", service_draws=3).draws() == 3
    once = ComposeConfig(library_scope="all", service_draws=1)
    default = ComposeConfig(library_scope="all")
    composed_once = sum(draft_task(seed, once).failure is None for seed in range(30))
    composed = [draft_task(seed, default) for seed in range(30)]
    assert composed_once <= 27  # 25 of 30 today
    assert sum(d.failure is None for d in composed) >= 27
    again = draft_task(5, default)
    assert again.task_hash() == composed[5].task_hash(), "the draws are seeded: a replay gives the same task"


def test_a_chain_can_start_at_a_read_that_needs_nothing_the_agent_knows():
    """Over the whole library about four chains in ten start at a read no chain value can be
    carried into (Alpaca's get_account_info, which takes no argument, or a read asked with
    constants the request states: `links.Source`) instead of a value the request states. The
    request says where to read it and never the value: the start is hidden like every value the
    agent discovers (an instruction quoting it is rejected), and the first lookup takes the read's
    answer. The curated default states its start, as before."""
    config = ComposeConfig(library_scope="all")
    drafts = [draft_task(seed, config) for seed in range(12)]
    started = [d for d in drafts if "start_source" in d.metadata]
    assert 2 <= len(started) <= 10, len(started)
    draft = started[0]
    first = draft.steps[0]
    assert first.tool.startswith(draft.metadata["start_source"]["service"] + ".")
    assert not first.bindings, "the read takes nothing the chain found"
    assert all(str(value) in draft.instruction for value in first.arguments.values()), "constants are stated"
    assert any(b.step == 0 for b in draft.steps[1].bindings.values()), "the first lookup reads the answer"
    assert draft.values[0].lower() not in draft.instruction.lower()
    record = compose_task(draft.seed, config, "source")
    assert record.status == "accepted", record.reasons
    assert record.metadata["hidden_values"] == draft.values
    quoted = f"{record.instruction}\n(It is {draft.values[0]}.)"
    assert not gates.chain_hidden(quoted, record.metadata["hidden_values"]).passed
    stated = next(d for d in drafts if d.failure is None and "start_source" not in d.metadata)
    assert stated.hidden_values() == stated.values[1:] and stated.values[0] in stated.instruction
    curated = draft_task(0, ComposeConfig())
    assert "start_source" not in curated.metadata and curated.values[0] in curated.instruction


class _Silent:
    """A world model whose answers hold nothing a hop could read (an LLM answering off-schema)."""

    reads_state = False

    def simulate(self, service, tool, arguments, output_schema, *, state=None):
        return {"simulated": True}


def test_a_link_that_cannot_be_planted_fails_its_candidate_and_the_run_goes_on():
    config = ComposeConfig(library_scope="all")
    with installed_world_model(_Silent()):
        drafts = [draft_task(seed, config) for seed in range(6)]
        record = compose_task(1, config, "silent")
    failures = [d.failure or "" for d in drafts]
    assert sum("answered without a value at" in f for f in failures) >= 3, failures
    assert record.status == "rejected"
    assert record.reasons == [f"composable: {failures[1]}"], (
        "the reason names the tool that answered without it"
    )
