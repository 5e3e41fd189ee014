"""Fixed-recipe baselines through the same loop (issue 14): the registry's contract, what each
recipe does procedurally, and each recipe's own prompt over real HTTP to the scripted server."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from envpipeline.commands.terminal import forge_command
from envpipeline.errors import ConfigError
from envpipeline.forge.knobs import difficulty_of
from envpipeline.forge.loop import run_forge
from envpipeline.forge.recipes import ALL_ACTIONS, RECIPES, get_recipe, recipe_decisions
from envpipeline.forge.variants import procedural_origin
from envpipeline.llm import LLMClient, LLMConfig
from envpipeline.models.selection import SeedPassRate
from envpipeline.synth.llm import LLMSynthesizer
from envpipeline.synth.procedural import ProceduralSynthesizer
from envpipeline.synth.prompts import BASELINE_STRATEGIES, recipe_messages
from envpipeline.terminal.families.registry import get_family
from envpipeline.terminal.seeds import materialize_seed
from tests.llm_server import ScriptedLLMServer, llm_server_fixture  # noqa: F401 - the fixture
from tests.unit.test_llm_synth import artifact, fenced, user_prompt

KEYS = ["fam-csv-json-merge-medium-0", "fam-log-processing-easy-0", "fam-text-parsing-hard-0"]
RATES = [
    SeedPassRate(seed_id=KEYS[0], pass_rate=0.5, required_skills=["csv", "json", "validation"]),
    SeedPassRate(seed_id=KEYS[1], pass_rate=1.0, required_skills=["regex", "aggregation"]),
    SeedPassRate(seed_id=KEYS[2], pass_rate=0.0, required_skills=["text-parsing", "regex"]),
]


@pytest.fixture(scope="module")
def seeds(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("seeds")
    return {k: Path(materialize_seed(k, root)["bundle_path"]) for k in KEYS}


@pytest.mark.parametrize("name", list(RECIPES))
def test_recipe_contract(name: str, seeds: dict[str, Path]) -> None:
    recipe = get_recipe(name)
    assert recipe.name == name and recipe.actions and set(recipe.actions) <= set(ALL_ACTIONS)
    assert recipe.strategy == "envs_forge" if name == "milp" else recipe.strategy in BASELINE_STRATEGIES
    option = next(p for p in forge_command.params if p.name == "recipe")
    assert isinstance(option.type, click.Choice) and list(option.type.choices) == list(RECIPES)
    decisions, trace = recipe_decisions(RATES, name)
    assert {d.seed_id for d in decisions} == set(KEYS) and {d.recipe for d in decisions} == {name}
    assert all(d.action_variant in recipe.actions for d in decisions)
    if not recipe.selector:  # the mask fixes the action: no policy-relative choice
        assert {d.action_variant for d in decisions} == set(recipe.actions) and trace.status == "optimal"
    user = user_prompt({"messages": recipe_messages(seeds[KEYS[0]], decisions[0], sample_index=0, model="m")})
    assert ("## Solver payload" in user) == (name == "milp")
    if name != "milp":
        direction, sentence = BASELINE_STRATEGIES[recipe.strategy]
        assert f"## Strategy\n{recipe.strategy}: {sentence}" in user
        assert f"## Evolution direction\n{direction}" in user
        assert ("## Example tasks" in user) == (recipe.shots > 0)


def test_an_unknown_recipe_is_refused() -> None:
    with pytest.raises(ConfigError, match="few-shot"):
        get_recipe("zero-shot")


def test_milp_chooses_by_pass_rate_evol_depth_does_not() -> None:
    milp = {d.seed_id: d.projection for d in recipe_decisions(RATES, "milp")[0]}
    assert milp[KEYS[1]] == "increase_complexity" and milp[KEYS[2]] == "reduce_complexity"
    evol = {d.projection for d in recipe_decisions(RATES, "evol-depth")[0]}
    assert evol == {"increase_complexity"}


def _knobs(folder: Path) -> tuple[str, dict, int]:
    origin = procedural_origin(folder)
    assert origin is not None
    return origin["family"], origin["knobs"], int(origin["seed"])


def test_procedural_recipes(seeds: dict[str, Path], tmp_path: Path) -> None:
    runs = {}
    for name in ("few-shot", "evol-depth", "self-instruct"):
        decisions, _ = recipe_decisions(RATES, name)
        runs[name] = run_forge(
            decisions,
            seeds,
            ProceduralSynthesizer(),
            lambda _: [],
            6,
            tmp_path / name,
            grow_pool=get_recipe(name).pool,
        )
        assert len(runs[name].accepted) == 6 and {a.recipe for a in runs[name].accepted} == {name}
    for bundle in runs["few-shot"].accepted:  # a new instance at the seed's knobs
        family, knobs, seed = _knobs(Path(bundle.bundle_path))
        parent = _knobs(seeds[bundle.seed_id])
        assert (family, knobs) == parent[:2] and seed != parent[2]
    gains = {}  # harder along the depth knobs on every seed (the hard seed's are at their maximum)
    for bundle in runs["evol-depth"].accepted:
        family, knobs, _ = _knobs(Path(bundle.bundle_path))
        before = difficulty_of(get_family(family), _knobs(seeds[bundle.seed_id])[1])
        gains[bundle.seed_id] = difficulty_of(get_family(family), knobs) - before
    assert gains[KEYS[0]] > 0 and gains[KEYS[1]] > 0 and gains[KEYS[2]] >= 0
    # self-instruct: the first three come from the seeds, the next three from those accepted bundles
    accepted = runs["self-instruct"].accepted
    assert [a.parent for a in accepted[:3]] == [seeds[a.seed_id].name for a in accepted[:3]]
    assert [a.parent for a in accepted[3:]] == [a.task_name for a in accepted[:3]]
    assert all(a.task_name.startswith(f"{a.seed_id}--self-instruct-s") for a in accepted)


@pytest.mark.llm
def test_a_baseline_recipe_gets_its_own_prompt_and_repair(
    llm_server: ScriptedLLMServer,  # noqa: F811 - the fixture
    seeds: dict[str, Path],
    tmp_path: Path,
) -> None:
    [decision] = [d for d in recipe_decisions(RATES, "few-shot")[0] if d.seed_id == KEYS[0]]
    broken = artifact()
    del broken["files"]["tests/test.sh"]
    llm_server.push(fenced(broken), fenced(artifact()))
    config = LLMConfig(model="openai/forge-test", api_base=llm_server.api_base, num_retries=0, timeout_sec=5)
    result = LLMSynthesizer(LLMClient(config), model=config.model, max_repairs=1).synthesize(
        seeds[KEYS[0]], decision, out_dir=tmp_path / "b"
    )
    assert result.accepted and len(result.attempts) == 2
    first, repair = (user_prompt(r) for r in llm_server.requests)
    system = llm_server.requests[0]["messages"][0]["content"]
    assert "learning frontier" not in system and "## Skill subgraph" not in first
    assert "few_shot: Create a close variant" in first and "## Example tasks" in first
    assert KEYS[1] in first.split("## Example tasks", 1)[1].split("## Sample", 1)[0]  # another seed's task
    assert "## Repair index\n1" in repair and "few_shot: Create a close variant" in repair
    assert "Keep the baseline strategy" in llm_server.requests[1]["messages"][0]["content"]
    assert result.output is not None and result.output.metadata["solver_payload"]["recipe"] == "few-shot"
