"""The paper's recorded configuration (issue 14): portfolio selection with coverage over seeds that
carry optional skill nodes, the skill payload it yields, and exports that interleave actions."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from envpipeline.forge.loop import interleave, run_forge
from envpipeline.forge.passrates import seed_skills
from envpipeline.models.selection import Decision, SeedPassRate
from envpipeline.select.selector import select_actions
from envpipeline.select.skills import default_taxonomy, seed_optional_nodes
from envpipeline.synth.base import SynthesisAttempt, SynthesisResult
from envpipeline.synth.prompts import skill_subgraph
from envpipeline.terminal.families.registry import all_families
from envpipeline.terminal.seeds import materialize_seed

#: one seed per family with pass rates over every band, seeds in family order
PASS_RATES = [0.0, 0.0, 0.25, 0.0, 0.5, 0.0, 0.25, 0.5, 1.0, 1.0, 0.75, 1.0]


def family_rates() -> list[SeedPassRate]:
    rates = []
    for (name, family), p in zip(all_families().items(), PASS_RATES, strict=True):
        required = sorted(family.skills)
        rates.append(
            SeedPassRate(
                seed_id=name,
                pass_rate=p,
                required_skills=required,
                optional_skills=seed_optional_nodes(required),
            )
        )
    return rates


def test_a_seed_carries_optional_taxonomy_neighbours(tmp_path: Path) -> None:
    folder = Path(materialize_seed("fam-csv-json-merge-medium-0", tmp_path)["bundle_path"])
    required, optional = seed_skills(folder)
    assert required == ["csv", "json", "validation"]
    assert optional and not set(optional) & set(required)
    neighbours = {nb for node in required for nb in default_taxonomy().node(node).neighbours}
    assert set(optional) <= neighbours


def test_portfolio_selection_counts_coverage_and_reduce_keeps_the_counted_nodes() -> None:
    decisions, trace = select_actions(family_rates(), mode="portfolio")
    assert trace.formulation == "portfolio" and trace.status == "optimal"
    assert trace.target_count == len(decisions) == 12 and trace.n_coverage_targets > 0
    counted = [d for d in decisions if d.projection == "reduce_complexity" and d.selected_optional_skills]
    assert counted, "some reduce activates its dropped system nodes toward coverage"
    for d in decisions:
        graph = skill_subgraph(d)
        assert not set(graph.allowed_removed_nodes) & set(d.selected_optional_skills)
        assert set(d.selected_optional_skills) <= set(graph.preserve_nodes)


@pytest.mark.parametrize("mode", ["local", "portfolio"])
def test_the_payload_offers_addable_nodes_in_every_mode(mode: str) -> None:
    decisions, _ = select_actions(family_rates(), mode=mode)
    for d in decisions:
        graph = skill_subgraph(d)
        assert graph.allowed_added_nodes, d.action_variant
        assert not set(graph.allowed_added_nodes) & set(d.required_skills)
    if mode == "local":  # nothing is counted toward coverage: a reduce may drop its system nodes
        reduces = [d for d in decisions if d.projection == "reduce_complexity" and d.removable_skills]
        assert reduces and all(skill_subgraph(d).allowed_removed_nodes == d.removable_skills for d in reduces)


class AcceptAll:
    """Writes a one-file bundle for every decision (the loop's order is what is under test)."""

    def synthesize(self, seed_dir, decision, *, out_dir, sample_index=0, validate=None):
        out_dir.mkdir(parents=True)
        (out_dir / "task.toml").write_text(f"# {decision.action_variant}\n")
        return SynthesisResult(
            synthesizer="accept-all",
            seed_id=decision.seed_id,
            action_variant=decision.action_variant,
            sample_index=sample_index,
            bundle_dir=out_dir,
            attempts=[SynthesisAttempt(index=0, kind="initial")],
        )


def test_a_target_below_the_selection_exports_a_mix_of_actions(tmp_path: Path) -> None:
    decisions, _ = select_actions(family_rates(), mode="portfolio")
    projections = Counter(d.projection for d in decisions)
    first_eight = Counter(d.projection for d in decisions[:8])
    assert (
        projections["increase_complexity"] and not first_eight["increase_complexity"]
    )  # seed order has none
    report = run_forge(
        decisions, {d.seed_id: tmp_path for d in decisions}, AcceptAll(), lambda _: [], 8, tmp_path / "x"
    )
    exported = Counter(a.action_variant.split("/")[0] for a in report.accepted)
    assert len(report.accepted) == 8 and set(exported) == set(projections)
    assert exported["increase_complexity"] >= 2


def test_interleave_is_round_robin_over_variants_then_seeds() -> None:
    def make(seed: str, variant: str) -> Decision:
        projection, direction = variant.split("/")
        return Decision.model_validate(
            {
                "seed_id": seed,
                "projection": projection,
                "direction": direction,
                "action_variant": variant,
                "pass_rate": 0.5,
                "reward_band": "frontier",
                "projected_pass_rate": 0.5,
                "frontier_score": 1.0,
                "backend": "scip",
            }
        )

    red, inc, div = (
        "reduce_complexity/in_depth",
        "increase_complexity/in_depth",
        "diversify_frontier/in_breadth",
    )
    order = interleave([make("a", red), make("b", red), make("c", red), make("d", div), make("e", inc)])
    assert [d.seed_id for d in order] == ["e", "a", "d", "b", "c"]
