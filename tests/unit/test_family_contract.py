"""Registry-wide contract of task families: static checks, oracle = 1, nop = 0, partials < 1.

Every registered family is covered for free. The local sandbox runs everywhere; the Docker part
is marked `docker` and runs wherever an engine and the base image exist (CI builds the image).

Edge cases are drawn per instance (issue 14): with every edge case present, the old contract
holds (oracle 1, nop 0, every partial < 1); a partial scores exactly 1 where its edge case is
absent and below 1 where it is the only one; a solution missing two edge cases fails where either
is present; and raising the knobs never raises a fixed policy's pass rate on a seed and lowers its
mean (the sign contract). Sandbox results are cached per (instance, missed set): runs are
deterministic. A sample runs by default; `make test-full` runs every variant, pair and many seeds.
"""

import hashlib
import itertools
import json
import random
from pathlib import Path

import pytest

from envpipeline.errors import ConfigError
from envpipeline.models.bundle import Difficulty
from envpipeline.redteam.registry import policies_for
from envpipeline.terminal.checks import check_bundle
from envpipeline.terminal.families._script_kit import SolverProgram
from envpipeline.terminal.families.base import DIFFICULTIES, Knobs, write_generated
from envpipeline.terminal.families.registry import all_families
from envpipeline.terminal.verify import score_variant, verify_bundle

FAMILIES = all_families()
REQUIRED_COVERAGE = {
    "log-processing",
    "csv-json-merge",
    "text-parsing",
    "file-organization",
    "sqlite-query",
    "git-operations",
    "config-editing",
    "archive-handling",
    "data-validation",
    "cron-scheduling",
    "service-monitoring",
}


def test_registry_covers_the_required_families():
    assert len(FAMILIES) >= 12
    assert set(FAMILIES) >= REQUIRED_COVERAGE, REQUIRED_COVERAGE - set(FAMILIES)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_declares_knobs_presets_and_variants(name):
    family = FAMILIES[name]
    assert family.skills and family.category and family.description
    assert len(family.variants) >= 2 and "oracle" not in family.variants
    properties = family.knob_model.model_json_schema()["properties"]
    assert properties, "a family needs knobs"
    assert {p.get("axis") for p in properties.values()} == {"depth", "breadth"}, "knobs on both axes"
    for difficulty in DIFFICULTIES:
        family.knobs_for(difficulty)
    easy, hard = family.knobs_for("easy").model_dump(), family.knobs_for("hard").model_dump()
    assert easy != hard, "difficulty presets must differ"


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_generation_is_deterministic_and_seeds_differ(name):
    family = FAMILIES[name]
    knobs = family.knobs_for("medium")
    a, b = family.generate(3, knobs, "medium"), family.generate(3, knobs, "medium")
    assert a.model_dump() == b.model_dump()
    assert family.generate(4, knobs, "medium").model_dump() != a.model_dump()
    assert set(a.solutions) == {"oracle", *family.variants}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_generate_refuses_knobs_of_another_family(name):
    family = FAMILIES[name]
    other = next(f for n, f in FAMILIES.items() if f.knob_model is not family.knob_model)
    with pytest.raises(ConfigError, match=f"family {name} needs {family.knob_model.__name__} knobs"):
        family.generate(0, other.knobs_for("easy"), "easy")


def _bundle(tmp_path: Path, name: str, difficulty: Difficulty, seed: int = 0) -> tuple[Path, dict]:
    """A bundle with every edge case present, and each partial variant's solution folder."""
    family = FAMILIES[name]
    task = family.generate(seed, family.knobs_for(difficulty), difficulty, edge_cases=family.variants)
    root = write_generated(task, tmp_path / f"{name}-{difficulty}")
    variants = {}
    for variant, files in task.solutions.items():
        if variant == "oracle":
            continue
        folder = tmp_path / "variants" / variant
        for relative, content in files.items():
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            (folder / relative).write_text(content)
            (folder / relative).chmod(0o755)
        variants[variant] = folder
    return root, variants


def _assert_gold(root: Path, variants: dict, sandbox) -> None:
    report = check_bundle(root)
    assert report.passed, json.dumps([c.model_dump() for c in report.checks if not c.passed])
    result = verify_bundle(root, sandbox)
    assert result.verdict == "verified", (result.reasons, [t.verifier_exec for t in result.trials])
    assert result.oracle_rewards == [1.0, 1.0] and result.nop_reward == 0.0
    # the red_team gate ran every terminal policy and none earned reward 1
    assert {o.policy for o in result.red_team} == {p.name for p in policies_for("terminal")}
    assert not [o.policy for o in result.red_team if o.broke or o.reward not in (0.0, None)]
    for variant, folder in variants.items():
        trial = score_variant(root, sandbox, folder)
        assert trial.verdict == "ok", (variant, trial.reason)
        assert trial.reward is not None and trial.reward < 1.0, (
            f"partial variant {variant} scored {trial.reward}"
        )


def _one_difficulty_per_family() -> list:
    """Every family at one difficulty in every run (family i at the i-th difficulty, round the
    list, so each difficulty is covered by a third of the families); the other two with `make
    test-full` (~2.8 s each)."""
    return [
        pytest.param(name, difficulty, marks=() if j == i % len(DIFFICULTIES) else pytest.mark.full_matrix)
        for i, name in enumerate(sorted(FAMILIES))
        for j, difficulty in enumerate(DIFFICULTIES)
    ]


@pytest.mark.parametrize(("name", "difficulty"), _one_difficulty_per_family())
def test_family_bundles_are_gold_under_the_local_sandbox(name, difficulty, tmp_path, local_sandbox):
    root, variants = _bundle(tmp_path, name, difficulty)
    _assert_gold(root, variants, local_sandbox)


#: Families gold-verified under Docker in every run (~40 s each); the rest run with `make test-full`
#: (every family is gold-verified on the local sandbox in every run, and parity is tested apart).
DOCKER_SAMPLE = ("archive-handling", "csv-json-merge", "git-operations")


@pytest.mark.docker
@pytest.mark.parametrize(
    "name",
    [n if n in DOCKER_SAMPLE else pytest.param(n, marks=pytest.mark.full_matrix) for n in sorted(FAMILIES)],
)
def test_family_bundles_are_gold_under_docker(name, tmp_path, docker_sandbox):
    root, variants = _bundle(tmp_path, name, "medium", seed=1)
    _assert_gold(root, variants, docker_sandbox)


_DIGEST_EVERY_FAMILY = """
import hashlib, json
from envpipeline.terminal.families.registry import all_families
for name, family in sorted(all_families().items()):
    task = family.generate(1, family.knobs_for("medium"), "medium")
    print(name, hashlib.sha256(json.dumps(task.model_dump(), sort_keys=True).encode()).hexdigest())
"""


def test_every_family_generates_the_same_bytes_in_every_process():
    """No family may depend on set or dict-hash order: two hash seeds, one output."""
    import os
    import subprocess
    import sys

    outputs = {
        subprocess.run(
            [sys.executable, "-c", _DIGEST_EVERY_FAMILY],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outputs) == 1, "a family's files differ between processes"


# --- Edge cases drawn per instance (issue 14): every partial passes exactly where its edge case
# is absent, and a fixed policy's pass rate falls as the knobs rise. ---------------------------


def _extreme_knobs(family, end: str):
    """Every knob at its minimum ("min") or maximum ("max")."""
    properties = family.knob_model.model_json_schema()["properties"]
    key = "minimum" if end == "min" else "maximum"
    return family.knob_model(**{k: p[key] for k, p in properties.items()})


def _one_step_up(family, knobs):
    """`knobs` with its first knob that can still rise raised by one step."""
    properties = family.knob_model.model_json_schema()["properties"]
    values = knobs.model_dump()
    name = next(k for k, p in properties.items() if values[k] < p["maximum"])
    return family.knob_model(**{**values, name: values[name] + 1})


class _Scores:
    """Rewards of solutions on generated instances, each run once in the local sandbox (runs are
    deterministic, so a result is cached per (instance digest, missed set))."""

    def __init__(self, root: Path, sandbox) -> None:
        self.root, self.sandbox = root, sandbox
        self.bundles: dict[str, Path] = {}
        self.rewards: dict[tuple[str, frozenset[str]], float] = {}

    def bundle(self, task) -> tuple[str, Path]:
        digest = hashlib.sha256(json.dumps(task.model_dump(), sort_keys=True).encode()).hexdigest()[:16]
        if digest not in self.bundles:
            self.bundles[digest] = write_generated(task, self.root / digest)
        return digest, self.bundles[digest]

    def reward(self, task, missed) -> float:
        missed = frozenset(missed)
        digest, root = self.bundle(task)
        if (digest, missed) not in self.rewards:
            folder = self.root / "solutions" / f"{digest}-{'+'.join(sorted(missed)) or 'oracle'}"
            for relative, content in task.solution_missing(missed).items():
                (folder / relative).parent.mkdir(parents=True, exist_ok=True)
                (folder / relative).write_text(content)
                (folder / relative).chmod(0o755)
            trial = score_variant(root, self.sandbox, folder)
            assert trial.verdict == "ok" and trial.reward is not None, (
                task.name,
                sorted(missed),
                trial.reason,
            )
            self.rewards[(digest, missed)] = trial.reward
        return self.rewards[(digest, missed)]


@pytest.fixture(scope="module")
def scores(tmp_path_factory, local_sandbox) -> _Scores:
    return _Scores(tmp_path_factory.mktemp("edge-cases"), local_sandbox)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_declares_edge_case_axes_and_a_solver_for_any_missed_set(name):
    family = FAMILIES[name]
    assert set(family.edge_case_axes) == set(family.variants), "every edge case needs an axis"
    assert set(family.edge_case_axes.values()) <= {"depth", "breadth"}
    task = family.generate(0, family.knobs_for("medium"), "medium", edge_cases=family.variants)
    assert isinstance(task.solver, SolverProgram), "the family must provide a solver"
    assert task.edge_cases == sorted(family.variants)
    subsets = [
        frozenset(s)
        for r in range(len(family.variants) + 1)
        for s in itertools.combinations(family.variants, r)
    ]
    scripts = {json.dumps(task.solution_missing(s), sort_keys=True) for s in subsets}
    assert len(scripts) == len(subsets), "each missed set needs its own solution"
    assert task.solution_missing(frozenset()) == task.solutions["oracle"]


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_higher_knobs_draw_a_superset_of_edge_cases(name):
    family = FAMILIES[name]
    low = _extreme_knobs(family, "min")
    high = _extreme_knobs(family, "max")
    counts = {"min": 0, "max": 0}
    for seed in range(200):
        at_low, at_step = (
            family.draw_edge_cases(seed, low),
            family.draw_edge_cases(seed, _one_step_up(family, low)),
        )
        at_high = family.draw_edge_cases(seed, high)
        assert at_low <= at_step <= at_high, seed
        counts["min"] += len(at_low)
        counts["max"] += len(at_high)
    assert counts["min"] < counts["max"]
    assert family.generate(5, high, "hard").edge_cases == sorted(family.draw_edge_cases(5, high))


def _variant_cases() -> list:
    """(family, variant): the first variant of each family by default, every one in the full run."""
    return [
        pytest.param(name, variant, marks=() if i == 0 else pytest.mark.full_matrix)
        for name in sorted(FAMILIES)
        for i, variant in enumerate(FAMILIES[name].variants)
    ]


@pytest.mark.parametrize(("name", "variant"), _variant_cases())
def test_a_partial_passes_exactly_where_its_edge_case_is_absent(name, variant, scores):
    family = FAMILIES[name]
    knobs = family.knobs_for("medium")
    others = [v for v in family.variants if v != variant]
    without = family.generate(1, knobs, "medium", edge_cases=others)
    assert variant not in without.edge_cases
    assert scores.reward(without, {variant}) == 1.0, f"{variant} failed where its edge case is absent"
    only = family.generate(1, knobs, "medium", edge_cases=[variant])
    assert scores.reward(only, {variant}) < 1.0, f"{variant} passed where its edge case is present"
    assert scores.reward(only, set()) == 1.0


def _pair_cases() -> list:
    """(family, pair of variants): the first pair of each family by default, every one in the full run."""
    return [
        pytest.param(name, pair, marks=() if i == 0 else pytest.mark.full_matrix)
        for name in sorted(FAMILIES)
        for i, pair in enumerate(itertools.combinations(FAMILIES[name].variants, 2))
    ]


@pytest.mark.parametrize(("name", "pair"), _pair_cases())
def test_a_solution_missing_two_edge_cases_fails_where_either_is_present(name, pair, scores):
    family = FAMILIES[name]
    knobs = family.knobs_for("medium")  # the instances of the test above: the sandbox runs are shared
    neither = family.generate(1, knobs, "medium", edge_cases=[v for v in family.variants if v not in pair])
    assert scores.reward(neither, set(pair)) == 1.0, f"missing {pair} failed where neither is present"
    for present in pair:
        task = family.generate(1, knobs, "medium", edge_cases=[present])
        assert scores.reward(task, set(pair)) < 1.0, f"missing {pair} passed with {present} present"


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_oracle_scores_one_and_nothing_zero_without_any_edge_case(name, tmp_path, local_sandbox):
    family = FAMILIES[name]
    task = family.generate(3, family.knobs_for("hard"), "hard", edge_cases=())
    assert task.edge_cases == []
    root = write_generated(task, tmp_path / name)
    result = verify_bundle(root, local_sandbox, with_red_team=False)
    assert result.oracle_rewards == [1.0, 1.0] and result.nop_reward == 0.0, result.reasons


#: The fixed policy of the sign contract: K solutions, each handling every edge case with chance 0.7.
POLICY_SIZE = 3


def _policy(family) -> list[frozenset[str]]:
    """The policy's missed sets, drawn once from a fixed rng; a draw that misses nothing is drawn
    again (the oracle passes everywhere, so it would only dilute the measured difference)."""
    rng = random.Random(f"sign-contract:{family.name}")
    policy: list[frozenset[str]] = []
    while len(policy) < POLICY_SIZE:
        missed = frozenset(v for v in family.variants if rng.random() >= 0.7)
        if missed:
            policy.append(missed)
    return policy


def _pass_rate(scores: _Scores, family, seed: int, knobs, difficulty: Difficulty) -> float:
    task = family.generate(seed, knobs, difficulty)
    return sum(scores.reward(task, missed) == 1.0 for missed in _policy(family)) / POLICY_SIZE


def _assert_sign(scores: _Scores, name: str, seeds: range, with_step: bool) -> None:
    """Every knob at its minimum, one knob a step higher (`with_step`), every knob at its maximum:
    per seed the pass rate never rises along that chain, and its mean falls from min to max."""
    family = FAMILIES[name]
    low, high = _extreme_knobs(family, "min"), _extreme_knobs(family, "max")
    chain: list[tuple[str, Knobs, Difficulty]] = [("min", low, "easy"), ("max", high, "hard")]
    if with_step:
        chain.insert(1, ("step", _one_step_up(family, low), "easy"))
    rates: dict[str, list[float]] = {key: [] for key, _, _ in chain}
    for seed in seeds:
        seen = [(key, _pass_rate(scores, family, seed, knobs, preset)) for key, knobs, preset in chain]
        for (lower, before), (higher, after) in itertools.pairwise(seen):
            assert after <= before, f"seed {seed}: the pass rate rose from {lower} to {higher} knobs: {seen}"
        for key, rate in seen:
            rates[key].append(rate)
    mean = {key: sum(values) / len(values) for key, values in rates.items()}
    assert mean["max"] < mean["min"], f"raising every knob did not lower the pass rate: {mean}"


#: Seeds of the sign contract: two (min and max knobs) in every run; many, with the one-step raise,
#: in the full run.
SIGN_SEEDS, SIGN_SEEDS_FULL = range(2), range(24)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_raising_the_knobs_lowers_a_fixed_policys_pass_rate(name, scores):
    _assert_sign(scores, name, SIGN_SEEDS, with_step=False)


@pytest.mark.full_matrix
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_raising_the_knobs_lowers_a_fixed_policys_pass_rate_over_many_seeds(name, scores):
    _assert_sign(scores, name, SIGN_SEEDS_FULL, with_step=True)
