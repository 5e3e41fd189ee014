"""Write accepted tasks, every trainer format and the dataset card under an output directory.

Layout (``<out>/``)::

    accepted_tasks.parquet          one AcceptedTask per row (all families)
    README.md                       the dataset card
    splits.json                     task_id -> split, plus the leakage report
    verl/{rl,eval}.parquet          verl RL rows           (rows.verl_rl_row; tools_kwargs as a struct)
    verl/tool_config.yaml           verl tool config       (trainers.verl_config)
    skyrl/{rl,eval}.parquet         SkyRL rows             (rows.skyrl_row)
    trl-rl/{rl,eval}.parquet        TRL / verifiers rows   (rows.trl_rl_row)
    verl-sft/{sft,eval}.parquet     verl multi-turn SFT    (rows.verl_sft_row)
    trl-sft/{sft,eval}.parquet      TRL SFT                (rows.trl_sft_row)

RL formats take the ``rl`` and ``eval`` splits, SFT formats the ``sft`` and ``eval`` splits (tasks
with an SFT trajectory only), so no task is trained on in two stages. An empty split writes no
file. ``jsonl`` is offered too (``suffix="jsonl"``). RL prompts are Parquet lists of structs (what
``datasets`` loads as list-of-dict features) and ``extra_info`` is one struct type on every row; the
SFT tool-calling columns (`rows.SFT_JSON_COLUMNS`) are JSON values (``arrow.json``, loaded by
``datasets`` as ``Json()``), so every message and tool schema loads back exactly, with no null padding.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from envpipeline.export import rows as row_builders
from envpipeline.export.card import dataset_card
from envpipeline.export.formats import STAGE_SPLITS, export_formats, get_format
from envpipeline.export.splits import SplitConfig, SplitResult, assign_splits
from envpipeline.export.unified import (
    AcceptedTask,
    ExportError,
    from_bundle,
    from_gated_task,
    from_task_record,
)
from envpipeline.models.task import TaskRecord
from envpipeline.models.world_task import GatedTask

RowFormat = Literal["verl", "verl-sft", "trl-sft", "trl-rl", "skyrl"]
ROW_FORMATS: tuple[str, ...] = tuple(export_formats())


def accepted_tasks(
    records: Iterable[TaskRecord] = (),
    gated: Iterable[GatedTask] = (),
    bundles: Iterable[str | Path] = (),
    worlds_root: str | Path | None = None,
) -> list[AcceptedTask]:
    """The accepted tasks of all three families in one schema (rejected ones are skipped).

    `worlds_root` (the folder holding the world days) inlines each world task's W0 in its env_spec.
    """
    tasks = [from_task_record(r) for r in records if r.status == "accepted"]
    tasks += [from_gated_task(g, worlds_root=worlds_root) for g in gated if g.status == "accepted"]
    tasks += [from_bundle(b) for b in bundles]
    return tasks


def format_rows(
    fmt: str, tasks: Sequence[AcceptedTask], split: SplitResult
) -> dict[str, list[dict[str, Any]]]:
    """Rows of one format per split name (empty splits omitted)."""
    if fmt not in export_formats():
        raise ExportError(f"unknown format {fmt!r}; choose one of {', '.join(ROW_FORMATS)}")
    spec = get_format(fmt)
    by_id = {t.task_id: t for t in tasks}
    out: dict[str, list[dict[str, Any]]] = {}
    for name in STAGE_SPLITS[spec.stage]:
        chosen = [by_id[i] for i in split.of(name) if i in by_id]
        if spec.stage == "sft":
            chosen = [t for t in chosen if t.reference_messages is not None]
        rows = [spec.row(t, name, index) for index, t in enumerate(chosen)]
        if rows:
            out[name] = rows
    return out


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def json_column(values: Sequence[Any]) -> pa.Array:
    """One Arrow JSON column: ``list<json>`` when every value is a list (one JSON value per item),
    else ``json`` (one JSON value per row); None stays null."""
    if all(v is None or isinstance(v, list) for v in values):
        storage = pa.array(
            [None if v is None else [_json_text(item) for item in v] for v in values], pa.list_(pa.string())
        )
        return storage.cast(pa.list_(pa.json_()))
    storage = pa.array([None if v is None else _json_text(v) for v in values], pa.string())
    return storage.cast(pa.json_())


def rows_table(rows: Sequence[dict[str, Any]], json_columns: Sequence[str] = ()) -> pa.Table:
    """An Arrow table of rows: `json_columns` as JSON values, the rest with one inferred schema."""
    names = list(rows[0])
    as_json = [c for c in names if c in json_columns]
    table = pa.Table.from_pylist([{k: v for k, v in row.items() if k not in as_json} for row in rows])
    for name in as_json:
        table = table.append_column(name, json_column([row.get(name) for row in rows]))
    return table.select(names)


def write_rows(
    rows: list[dict[str, Any]], path: Path, suffix: str = "parquet", json_columns: Sequence[str] = ()
) -> Path:
    """Write rows as Parquet (`json_columns` as JSON values, the rest one inferred Arrow schema) or
    as JSON lines; returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == "jsonl":
        with path.open("w", encoding="utf-8") as out:
            for row in rows:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
        return path
    try:
        table = rows_table(rows, json_columns)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise ExportError(
            f"{path}: rows do not share one Arrow schema ({e}); a field holds different types across rows"
        ) from e
    pq.write_table(table, path)
    return path


def write_format(
    fmt: str,
    tasks: Sequence[AcceptedTask],
    split: SplitResult,
    out: str | Path,
    suffix: str = "parquet",
) -> list[Path]:
    """Write one format's files under ``<out>/<fmt>/`` (SFT formats: `rows.SFT_JSON_COLUMNS` as JSON)."""
    folder = Path(out) / fmt
    json_columns = row_builders.SFT_JSON_COLUMNS if get_format(fmt).stage == "sft" else ()
    rows_by_split = format_rows(fmt, tasks, split)
    if fmt == "verl":  # tools_kwargs as verl's agent loop reads them, and verl/tool_config.yaml
        from envpipeline.trainers.verl_config import prepare_verl_export

        rows_by_split = prepare_verl_export(rows_by_split, tasks, folder, suffix)
    return [
        write_rows(rows, folder / f"{name}.{suffix}", suffix, json_columns)
        for name, rows in rows_by_split.items()
    ]


def write_accepted_tasks(tasks: Sequence[AcceptedTask], path: Path) -> Path:
    """The `accepted_tasks` table (all families, one schema)."""
    return write_rows([t.model_dump() for t in tasks], path)


def write_all(
    tasks: Sequence[AcceptedTask],
    out: str | Path,
    formats: Sequence[str] = ROW_FORMATS,
    config: SplitConfig | None = None,
    split: SplitResult | None = None,
    suffix: str = "parquet",
) -> dict[str, Any]:
    """Split, then write accepted tasks, every requested format, splits.json and the card."""
    if not tasks:
        raise ExportError("no accepted tasks to export")
    out = Path(out)
    split = split or assign_splits(tasks, config)
    files: dict[str, list[str]] = {
        "accepted_tasks": [str(write_accepted_tasks(tasks, out / "accepted_tasks.parquet").relative_to(out))]
    }
    for fmt in formats:
        files[fmt] = [str(p.relative_to(out)) for p in write_format(fmt, tasks, split, out, suffix)]
    (out / "splits.json").write_text(
        json.dumps(
            {"assignments": split.assignments, "report": split.report.model_dump()}, indent=2, sort_keys=True
        )
        + "\n"
    )
    (out / "README.md").write_text(dataset_card(tasks, split, files=files), encoding="utf-8")
    return {
        "out": str(out),
        "files": files,
        "split_sizes": split.report.split_sizes,
        "clean": split.report.clean,
    }
