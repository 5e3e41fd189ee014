"""WildAWM content: personas at scale, occupation-tied shop catalogues, core tools in the planner,
entity masking and masked diversity."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from envpipeline.errors import ConfigError
from envpipeline.models.world import JudgeVerdict
from envpipeline.worlds.build import materialize
from envpipeline.worlds.catalogues import DOMAINS, PERSONAL, all_product_names, catalogue_for
from envpipeline.worlds.genesis import persona_catalogue
from envpipeline.worlds.masking import EntityLexicon, default_lexicon, mask_entities
from envpipeline.worlds.metrics import diversity_report
from envpipeline.worlds.persona_pools import TRADES
from envpipeline.worlds.personas import (
    DiversityJudge,
    PersonaShortfall,
    fair_share,
    generate_persona,
    persona_capacity,
    propose_personas,
    trade_of,
)
from envpipeline.worlds.state import WorldReader, day_path

# --- personas at scale ------------------------------------------------------------------------


def test_300_personas_are_distinct_and_pass_the_judge():
    personas, _ = propose_personas(300, 0)
    assert len(personas) == 300
    assert len({p.occupation for p in personas}) == 300
    assert len({a.name for p in personas for a in p.arcs}) == 600
    assert len({p.persona_id for p in personas}) == 300
    # every trade is used, evenly: no trade holds more than its fair share
    trades = Counter(trade_of(p.occupation) for p in personas)
    assert set(trades) == set(TRADES) and max(trades.values()) <= fair_share(299, len(TRADES))
    # the judge accepts each one against those accepted before it
    judge = DiversityJudge()
    for i in (50, 150, 299):
        assert judge.review(personas[i], personas[:i]).accepted


def test_asking_beyond_the_pools_is_a_clear_error_not_a_cap():
    capacity = persona_capacity()["personas"]
    with pytest.raises(ConfigError, match=rf"{capacity + 1} personas asked for.*at most {capacity}"):
        propose_personas(capacity + 1, 0)


class RejectAll(DiversityJudge):
    def review(self, candidate, accepted):
        return JudgeVerdict(accepted=False, feedback="never", similarity=1.0)


def test_a_shortfall_raises_with_what_was_accepted():
    with pytest.raises(PersonaShortfall, match=r"only 0 of 2 personas") as caught:
        propose_personas(2, 0, judge=RejectAll(), max_candidates=2)
    assert caught.value.accepted == [] and len(caught.value.rejected) == 6


def test_judge_rejects_a_same_trade_tool_set_and_an_overused_trade():
    judge = DiversityJudge(threshold=1.0)
    first = generate_persona(0, 0)
    trade = trade_of(first.occupation)
    assert trade is not None
    sibling = generate_persona(0, 1).model_copy(
        update={"occupation": f"part-time {first.occupation}", "core_tools": first.core_tools}
    )
    verdict = judge.review(sibling, [first])
    assert not verdict.accepted
    assert "same trade" in verdict.feedback and verdict.repeats["core_tools"] == [",".join(first.core_tools)]
    assert "trade" in verdict.repeats and trade in verdict.repeats["trade"]
    revised = generate_persona(0, 1, revision=1, exclude=verdict.repeats)
    assert trade_of(revised.occupation) != trade and judge.review(revised, [first]).accepted


# --- catalogues -------------------------------------------------------------------------------


def persona_of_trade(trade: str, index: int = 0):
    """The first generated persona (seed 0) whose trade is `trade`."""
    for i in range(400):
        p = generate_persona(0, i)
        if trade_of(p.occupation) == trade:
            return p
    raise AssertionError(trade)


def test_catalogue_follows_the_trade():
    baker, developer = persona_of_trade("baker"), persona_of_trade("software developer")
    bread, code = persona_catalogue(baker), persona_catalogue(developer)
    personal = set(PERSONAL)
    assert {p.category for p in bread} - personal <= {c for d in ("baking", "kitchen") for c in DOMAINS[d]}
    assert {p.category for p in code} - personal <= {c for d in ("computing", "office") for c in DOMAINS[d]}
    assert not {p.name for p in bread} & {p.name for p in code}
    for catalogue in (bread, code):
        assert sum(p.category == "supplies" for p in catalogue) >= 3  # restock_supplies orders these
        assert len({p.sku for p in catalogue}) == len({p.name for p in catalogue}) == len(catalogue)
        assert {p.name for p in catalogue} <= all_product_names()


def test_two_personas_of_one_trade_get_different_catalogues():
    personas, _ = propose_personas(64, 0)
    bakers = [p for p in personas if trade_of(p.occupation) == "baker"]
    assert len(bakers) == 2
    a, b = (persona_catalogue(p) for p in bakers)
    assert [p.name for p in a] != [p.name for p in b]


def test_unknown_domain_is_named():
    with pytest.raises(ConfigError, match="unknown shop domain 'moon'"):
        catalogue_for(generate_persona(0, 0), ["moon"])


def test_world_shop_holds_the_catalogue_and_templates_read_it(tmp_path: Path):
    baker = persona_of_trade("baker")
    materialize(baker, 1, tmp_path / "w")
    rows = WorldReader(day_path(tmp_path / "w", 0)).query(
        "shop", "SELECT sku, name FROM products ORDER BY id"
    )
    assert [(r["sku"], r["name"]) for r in rows] == [(p.sku, p.name) for p in persona_catalogue(baker)]


# --- core tools drive the planner -------------------------------------------------------------


def test_core_tools_shift_the_skill_mix(tmp_path: Path):
    base = generate_persona(0, 0)
    money = base.model_copy(update={"core_tools": ["accounts", "bank", "flights"], "persona_id": "pa"})
    social = base.model_copy(update={"core_tools": ["chat", "dm", "files"], "persona_id": "pb"})
    apps: dict[str, Counter[str]] = {}
    skills: dict[str, Counter[str]] = {}
    for p in (money, social):
        deltas = materialize(p, 12, tmp_path / p.persona_id)
        acts = [a for d in deltas if d for a in d.activities]
        apps[p.persona_id] = Counter(x for a in acts for x in a.apps)
        skills[p.persona_id] = Counter(a.skill for a in acts)

    def share(who: str, tools: list[str]) -> float:
        return sum(apps[who][t] for t in tools) / sum(apps[who].values())

    assert share("pa", money.core_tools) > share("pb", money.core_tools) + 0.03
    assert share("pb", social.core_tools) > share("pa", social.core_tools) + 0.03
    assert skills["pa"] != skills["pb"]


# --- masking ----------------------------------------------------------------------------------


def test_mask_entities_replaces_each_type():
    text = (
        "Maja Kowalski (maja.k, maja.kowalski@example.org) asked on 2026-03-04T09:30:00 at 14:15 for "
        "2 Compact proofing basket at $21.99 in Lisbon: order ORD-10042, SKU-PROBAN-1A2B, booking "
        "AB12CD, see newsdaily.example."
    )
    assert mask_entities(text) == (
        "<NAME> (<NAME>, <EMAIL>) asked on <DATE> at <TIME> for <NUMBER> <PRODUCT> at <AMOUNT> in "
        "<PLACE>: order <ID>, <ID>, booking <ID>, see <SITE>."
    )


def test_mask_entities_keeps_words_that_merely_contain_a_name():
    # 'lina' is a first name, 'online' and 'Berglund' contain names but are other words
    assert mask_entities("online Berglund notes/restock-supplies.md Team") == (
        "online Berglund notes/restock-supplies.md Team"
    )


def test_lexicon_extras_cover_values_from_elsewhere():
    lexicon = default_lexicon().with_extra(names=["Zebulon Quartz"], products=["Moon rock"])
    assert mask_entities("Zebulon Quartz wants a Moon rock", lexicon) == "<NAME> wants a <PRODUCT>"
    assert mask_entities("Zebulon Quartz wants a Moon rock", EntityLexicon()) == (
        "Zebulon Quartz wants a Moon rock"
    )


def test_masked_diversity_sees_through_swapped_entities():
    names = ["Maja Kowalski", "Lars Petersen", "Amara Okafor", "Kenji Tanaka"]
    products = ["Compact proofing basket", "Pro headlamp", "Eco throw blanket", "Garden spade"]
    texts = [
        f"Ask {n} about the {p} and pay ${i + 10}.99 by 2026-03-0{i + 2}."
        for i, (n, p) in enumerate(zip(names, products))
    ]
    report = diversity_report(texts)
    assert report["masked"] and report["vendi"] == pytest.approx(1.0, abs=1e-6)
    assert report["vendi_raw"] > 2.0
    distinct = diversity_report(["Book a flight to the fair.", "Water the seed trays in the garden."])
    assert distinct["vendi"] > 1.9
