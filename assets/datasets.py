"""Shared assets: accepted_tasks (all families, one schema) -> training_datasets (splits, exports, card)
and harbor_tasks (a Harbor task folder per accepted task), both under ``<home>/datasets``."""

import json
import shutil
from collections import Counter
from pathlib import Path

from dagster import (
    AssetCheckResult,
    AssetExecutionContext,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)

from assets.automation import FRESH
from assets.compose import verified_composed_tasks
from assets.forge import verified_bundles
from assets.terminal import seed_verification
from assets.worlds import gated_world_tasks
from envpipeline.export.collect import collect_accepted, harbor_items
from envpipeline.export.harbor import export_harbor
from envpipeline.export.writers import write_all
from envpipeline.store.lake import Lineage
from envpipeline.store.tables import ACCEPTED_TASKS
from envpipeline.versions import Stage, code_version
from resources.store import LakeResource

DATASETS_CODE_VERSION = code_version(Stage.DATASETS)
#: The folder of ``<home>/datasets`` that `harbor_tasks` owns.
HARBOR_FOLDER = "harbor"


@asset(
    automation_condition=FRESH,
    group_name="datasets",
    deps=[verified_composed_tasks, seed_verification, verified_bundles, gated_world_tasks],
    code_version=DATASETS_CODE_VERSION,
    kinds={"python", "parquet"},
)
def accepted_tasks(context: AssetExecutionContext, store: LakeResource) -> MaterializeResult:
    """Every accepted task of CompoWorld, WildAWM and the terminal families, in one schema."""
    tasks = collect_accepted(store.lake())
    rows = ACCEPTED_TASKS.encode_all(tasks)
    store.lake().write_partition(
        "accepted_tasks", "all", rows, Lineage(context.run.run_id, DATASETS_CODE_VERSION)
    )
    return MaterializeResult(
        metadata={
            "tasks": len(tasks),
            "per_family": MetadataValue.json(dict(Counter(t.family for t in tasks))),
            "with_sft_trajectory": sum(t.reference_messages is not None for t in tasks),
        }
    )


@asset(
    group_name="datasets",
    deps=[accepted_tasks],
    code_version=DATASETS_CODE_VERSION,
    kinds={"parquet"},
    automation_condition=FRESH,
)
def training_datasets(context: AssetExecutionContext, store: LakeResource) -> MaterializeResult:
    """SFT / RL / eval splits without leakage, verl / TRL / SkyRL files, Harbor directories and a card.

    The tasks are the stored `accepted_tasks` (not collected again: the files hold what that asset
    recorded, and its 2-4 s of replaying reference runs is not paid twice)."""
    lake = store.lake()
    if "all" not in lake.partitions("accepted_tasks"):
        raise ValueError("accepted_tasks has not been materialized: materialize it before training_datasets")
    out = Path(store.home) / "datasets"
    clear_folder(out, keep=(HARBOR_FOLDER,))
    summary = write_all(ACCEPTED_TASKS.decode_all(lake.read("accepted_tasks", "all")), out)
    card = (out / "README.md").read_text()
    return MaterializeResult(
        metadata={
            "split_sizes": MetadataValue.json(summary.get("split_sizes", {})),
            "files": MetadataValue.json(summary.get("files", {})),
            "path": MetadataValue.path(str(out)),
            "card": MetadataValue.md(card),
        }
    )


@asset(
    group_name="datasets",
    deps=[accepted_tasks],
    code_version=DATASETS_CODE_VERSION,
    kinds={"python"},
    automation_condition=FRESH,
)
def harbor_tasks(store: LakeResource) -> MaterializeResult:
    """A Harbor task folder (`envpipeline.export.harbor`) per accepted task, in ``datasets/harbor``.

    Apart from `training_datasets` (which leaves this folder alone), so that the two exports can
    run side by side."""
    out = Path(store.home) / "datasets" / HARBOR_FOLDER
    shutil.rmtree(out, ignore_errors=True)
    written = export_harbor(harbor_items(store.lake()), out)
    return MaterializeResult(metadata={"tasks": len(written), "path": MetadataValue.path(str(out))})


def clear_folder(folder: Path, keep: tuple[str, ...] = ()) -> None:
    """Remove everything in `folder` but the entries named in `keep` (create it if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    for entry in folder.iterdir():
        if entry.name in keep:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


@asset_check(asset=training_datasets, description="No seed or near-duplicate instruction crosses splits.")
def splits_do_not_leak(store: LakeResource) -> AssetCheckResult:
    """The leakage report recomputed from the written splits is empty."""
    path = Path(store.home) / "datasets" / "splits.json"
    report = json.loads(path.read_text())["report"] if path.exists() else {"error": "no splits.json"}
    return AssetCheckResult(passed=bool(report.get("clean")), metadata={"report": MetadataValue.json(report)})
