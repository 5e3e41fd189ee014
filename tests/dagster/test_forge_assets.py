"""Envs-FORGE in Dagster: pass rates per seed, one MILP over seeds, synthesis and gold verification."""

import json
from typing import Any

from dagster import DagsterInstance, build_asset_check_context, materialize

from assets.forge import (
    forge_export,
    forge_export_has_target,
    seed_pass_rates,
    selector_decisions,
    synthesized_bundles,
    verified_bundles,
    verified_bundles_defeat_red_team,
)
from assets.terminal import seed_verification, terminal_seeds
from resources.forge import ForgeResource
from resources.sandbox import SandboxResource
from resources.store import LakeResource

KEYS = ["fam-text-parsing-easy-0", "fam-json-transform-medium-0"]


def json_value(entry: Any) -> Any:
    """The data of a JSON metadata entry."""
    return entry.value


def test_forge_assets_select_synthesize_and_verify(tmp_path, local_sandbox):
    resources = {
        "store": LakeResource(home=str(tmp_path)),
        "sandbox": SandboxResource(backend="local"),
        "forge": ForgeResource(rollouts=2, bundles_per_seed=1),
    }
    lake = resources["store"].lake()
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("terminal_seeds", KEYS)
        for key in KEYS:
            assert materialize(
                [terminal_seeds, seed_verification, seed_pass_rates],
                instance=instance,
                resources=resources,
                partition_key=key,
            ).success
        selected = materialize([selector_decisions], instance=instance, resources=resources)
        assert selected.success
        meta = selected.asset_materializations_for_node("selector_decisions")[0].metadata
        assert meta["trace"].value["backend"] == "scip" and meta["trace"].value["status"] == "optimal"
        trace = meta["trace"].value  # the default: the paper's recorded portfolio run with coverage rows
        assert trace["formulation"] == "portfolio" and trace["n_coverage_targets"] > 0
        for key in KEYS:
            forged = materialize(
                [synthesized_bundles, verified_bundles, verified_bundles_defeat_red_team],
                instance=instance,
                resources=resources,
                partition_key=key,
            )
            assert forged.success
            [check] = forged.get_asset_check_evaluations()
            assert check.passed and check.metadata["hack_pass_rate"].value == 0.0
            meta = forged.asset_materializations_for_node("verified_bundles")[0].metadata
            assert meta["accepted_hack_pass_rate"].value == 0.0
            [shown] = json_value(meta["pass_rates"])
            assert shown["measured_pass_rate"] is not None and shown["projected_pass_rate"] is not None
        # the next selection calibrates on the measured rows
        first = lake.read("selector_decisions", "all")
        reselected = materialize([selector_decisions], instance=instance, resources=resources)
        fits = json_value(
            reselected.asset_materializations_for_node("selector_decisions")[0].metadata["calibration"]
        )
        assert sum(f["observations"] for k, f in fits.items() if "@" not in k) == 2
    rates = {r["seed_id"]: r for r in lake.read("seed_pass_rates")}
    assert set(rates) == set(KEYS)
    assert all(len(json.loads(r["rollouts"])) == 2 for r in rates.values())
    decisions = lake.read("selector_decisions", "all")
    assert sorted(d["seed_id"] for d in decisions) == sorted(KEYS)
    verified = [r for key in KEYS for r in lake.read("verified_bundles", key)]
    assert len(verified) == 2 and all(r["accepted"] for r in verified)
    for row in verified:  # measured with the seeds' policy and K, next to the selector's projection
        decision = next(d for d in first if d["seed_id"] == row["seed_id"])
        assert row["projected_pass_rate"] == decision["projected_pass_rate"]
        assert 0.0 <= row["measured_pass_rate"] <= 1.0 and row["rollouts"] == 2
    assert {r["family"] for r in verified} == {"text-parsing", "json-transform"}
    for row in verified:  # every accepted bundle stores the outcome of every terminal policy: none scored 1
        outcomes = json.loads(row["red_team"])
        assert {o["policy"] for o in outcomes} == {"nop", "tamper", "garbage-reward"}
        assert not any(o["binary"] for o in outcomes)
    exported = sorted(p.name for p in (tmp_path / "bundles" / "verified").iterdir())
    assert len(exported) == 2
    # the loop to N: 2 verified bundles, N = 3 tops up one through the gold-verified loop, N = 1 trims
    for target, topped in ((3, 1), (1, 0)):
        with DagsterInstance.ephemeral() as instance:
            export = materialize(
                [forge_export, forge_export_has_target],
                instance=instance,
                resources={**resources, "forge": ForgeResource(rollouts=2, target=target, max_attempts=4)},
            )
        assert export.success
        [check] = export.get_asset_check_evaluations()
        assert check.passed and check.metadata["folders"].value == target
        meta = export.asset_materializations_for_node("forge_export")[0].metadata
        assert meta["exported"].value == target and meta["topped_up"].value == topped
        rows = lake.read("forge_export", "all")
        assert len(rows) == target and sum(r["topped_up"] for r in rows) == topped
        folders = sorted((tmp_path / "bundles" / "export").iterdir())
        assert [p.name for p in folders] == sorted(r["task_name"] for r in rows)
        assert all((p / "solution" / "solve.sh").is_file() for p in folders)


def test_red_team_check_fails_on_an_accepted_bundle_a_policy_breaks(tmp_path, local_sandbox):
    from envpipeline.store.lake import Lineage
    from tests.unit.test_redteam_terminal import weak_bundle

    store = LakeResource(home=str(tmp_path / "home"))
    weak = weak_bundle(tmp_path, "forwards-agent-result")
    row = {"seed_id": "weak", "accepted": True, "bundle_path": str(weak), "reasons": "[]", "red_team": "[]"}
    store.lake().write_partition("verified_bundles", "weak", [row], Lineage("test", "test"))
    check = verified_bundles_defeat_red_team(
        build_asset_check_context(), store=store, sandbox=SandboxResource(backend="local")
    )
    assert not check.passed
    assert check.metadata["broken"].value == {"forwards-agent-result": ["garbage-reward"]}
