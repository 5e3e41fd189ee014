"""Envs-FORGE in Dagster: pass rates per seed, one MILP over seeds, synthesis and gold verification."""

import json

from dagster import DagsterInstance, materialize

from assets.forge import seed_pass_rates, selector_decisions, synthesized_bundles, verified_bundles
from assets.terminal import seed_verification, terminal_seeds
from resources.forge import ForgeResource
from resources.sandbox import SandboxResource
from resources.store import LakeResource

KEYS = ["fam-text-parsing-easy-0", "fam-json-transform-medium-0"]


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
        for key in KEYS:
            assert materialize(
                [synthesized_bundles, verified_bundles],
                instance=instance,
                resources=resources,
                partition_key=key,
            ).success
    rates = {r["seed_id"]: r for r in lake.read("seed_pass_rates")}
    assert set(rates) == set(KEYS)
    assert all(len(json.loads(r["rollouts"])) == 2 for r in rates.values())
    decisions = lake.read("selector_decisions", "all")
    assert sorted(d["seed_id"] for d in decisions) == sorted(KEYS)
    verified = [r for key in KEYS for r in lake.read("verified_bundles", key)]
    assert len(verified) == 2 and all(r["accepted"] for r in verified)
    exported = sorted(p.name for p in (tmp_path / "bundles" / "verified").iterdir())
    assert len(exported) == 2
