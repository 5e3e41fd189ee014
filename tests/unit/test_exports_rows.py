"""Accepted tasks, leakage-free splits and every trainer export, loaded back with `datasets`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from datasets import Features, List, Value, load_dataset

from envpipeline.export.rows import flatten_schema, strip_nulls, with_dict_arguments
from envpipeline.export.splits import SplitConfig, assign_splits, leakage_report
from envpipeline.export.unified import AcceptedTask, ExportError, Rubric, from_task_record
from envpipeline.export.writers import ROW_FORMATS, write_all
from envpipeline.models.env_spec import EnvSpec
from tests.export_fixture import build_tasks

MESSAGE = {"role": Value("string"), "content": Value("string")}
EXTRA_INFO = {
    "index": Value("int64"),
    "split": Value("string"),
    "task_id": Value("string"),
    "family": Value("string"),
    "rubric": Value("string"),
    "tools_kwargs": Value("string"),
    "interaction_kwargs": Value("string"),
    "env_spec": Value("string"),
}


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> list[AcceptedTask]:
    return build_tasks(tmp_path_factory.mktemp("export-data"))


@pytest.fixture(scope="module")
def exported(tasks: list[AcceptedTask], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("export-out")
    return out, write_all(tasks, out)


def load(path: Path):
    return load_dataset("parquet", data_files=str(path), split="train")


def test_accepted_tasks_share_one_schema_across_families(tasks: list[AcceptedTask]) -> None:
    assert sorted({t.family for t in tasks}) == ["compose", "terminal", "world"]
    for task in tasks:
        rubric = task.rubric()
        assert rubric.task_id == task.task_id and rubric.criteria
        assert json.loads(task.provenance)["generator"]
    compose = [t for t in tasks if t.family == "compose"]
    assert all(t.reference_messages is not None for t in compose)
    assert [t["function"]["name"] for t in compose[0].tool_schemas()] == [
        "list_services",
        "list_tools",
        "describe_tool",
        "call_tool",
    ]
    assert any(c.check == "text" for c in compose[0].rubric().criteria)
    world = next(t for t in tasks if t.family == "world")
    messages = world.messages()
    assert messages is not None, "the world task has a successful hinted rollout"
    user = next(m for m in messages if m["role"] == "user")
    assert user["content"] == world.instruction and "Hints:" not in user["content"]
    called = {c["function"]["name"] for m in messages for c in m.get("tool_calls") or []}
    assert called <= {t["function"]["name"] for t in world.tool_schemas()}
    assert world.rubric().checklist and world.rubric().hints
    terminal = next(t for t in tasks if t.family == "terminal")
    assert terminal.reference_messages is None and terminal.difficulty == "easy"
    assert terminal.rubric().criteria[0].check == "verifier"


def test_rejected_records_are_refused(tasks: list[AcceptedTask]) -> None:
    from envpipeline.compose.author import ComposeConfig
    from envpipeline.compose.pipeline import compose_task

    rejected = next(
        r for r in (compose_task(s, ComposeConfig()) for s in range(40)) if r.status == "rejected"
    )
    with pytest.raises(ExportError, match="only accepted"):
        from_task_record(rejected)


def test_splits_keep_seeds_and_near_duplicates_together(tasks: list[AcceptedTask]) -> None:
    twin = tasks[2].model_copy(
        update={
            "task_id": "twin",
            "seed_key": "elsewhere",
            "instruction": tasks[2].instruction + " Please hurry.",
        }
    )
    pool = [*tasks, twin]
    config = SplitConfig(sft=0.4, rl=0.4, eval=0.2)
    result = assign_splits(pool, config)
    assert result.report.clean and not result.report.seeds_across_splits
    assert result.report.near_duplicate_pairs >= 1
    assert result.assignments["twin"] == result.assignments[tasks[2].task_id]
    assert result.assignments[tasks[0].task_id] == result.assignments[tasks[1].task_id]  # shared seed key
    assert result == assign_splits(pool, config), "deterministic"
    assert sum(result.report.split_sizes.values()) == len(pool)
    terminal = next(t for t in tasks if t.family == "terminal")
    assert result.assignments[terminal.task_id] != "sft", "no SFT trajectory, so not in the SFT split"
    # the report re-checks any assignment: separating the twins or a seed is caught
    broken = {**result.assignments, "twin": "eval" if result.assignments["twin"] != "eval" else "rl"}
    broken[tasks[1].task_id] = "eval" if broken[tasks[0].task_id] != "eval" else "rl"
    report = leakage_report(pool, broken, config.near_duplicate_threshold)
    assert not report.clean
    assert report.seeds_across_splits == [tasks[0].seed_key]
    assert {(p.a, p.b) for p in report.near_duplicates_across_splits} == {(tasks[2].task_id, "twin")}


def test_verl_and_skyrl_rows_load_with_homogeneous_extra_info(exported: tuple[Path, dict]) -> None:
    out, manifest = exported
    assert manifest["clean"]
    for fmt, reward_key, reward_features in (
        ("verl", "reward_model", {"style": Value("string"), "ground_truth": Value("string")}),
        ("skyrl", "reward_spec", {"method": Value("string"), "ground_truth": Value("string")}),
    ):
        assert manifest["files"][fmt], fmt
        for name in manifest["files"][fmt]:
            ds = load(out / name)
            features = ds.features
            assert features["data_source"] == Value("string")
            assert features["prompt"] == List(MESSAGE)
            assert features[reward_key] == reward_features
            if fmt == "verl":  # verl's agent loop calls .get on tools_kwargs: a struct, every tool named
                info = {k: v for k, v in features["extra_info"].items() if k != "tools_kwargs"}
                assert info == {k: v for k, v in EXTRA_INFO.items() if k != "tools_kwargs"}
            else:
                assert features["extra_info"] == EXTRA_INFO
            if fmt == "verl":
                assert features["agent_name"] == Value("string") and set(ds["agent_name"]) == {"tool_agent"}
            else:
                assert set(ds["env_class"]) == {"envpipeline"}
            for row in ds:
                assert row["data_source"] == f"envpipeline/{row['extra_info']['family']}"
                rubric = Rubric.model_validate_json(row[reward_key]["ground_truth"])
                assert rubric.task_id == row["extra_info"]["task_id"]
                assert row["extra_info"]["rubric"] == row[reward_key]["ground_truth"]
                if fmt == "verl":
                    tools_kwargs = row["extra_info"]["tools_kwargs"]
                    assert "submit_answer" in tools_kwargs and "call_tool" in tools_kwargs
                    for entry in tools_kwargs.values():
                        assert json.loads(entry["create_kwargs"]) == {"task_id": row["extra_info"]["task_id"]}
                else:
                    assert isinstance(json.loads(row["extra_info"]["tools_kwargs"]), dict)
                spec = EnvSpec.model_validate_json(row["extra_info"]["env_spec"])
                assert spec.task_id == row["extra_info"]["task_id"] and spec.criteria
                if spec.family == "compose":  # the initial state travels with the row
                    assert spec.environment["initial_state"]
                if spec.family == "world":  # W0 inlined by the exporter that had the world folder
                    assert spec.world_snapshot
                assert [m["role"] for m in row["prompt"]] == ["system", "user"]
            assert ds["extra_info"][0]["index"] == 0
    tool_config = yaml.safe_load((out / "verl" / "tool_config.yaml").read_text())
    names = {t["tool_schema"]["function"]["name"] for t in tool_config["tools"]}
    # every family's episode tools (world ones listed from its live episode), as the rows name them
    assert {"call_tool", "submit_answer", "exec", "web__request", "cli__exec"} <= names
    assert names == set(load(out / manifest["files"]["verl"][0])[0]["extra_info"]["tools_kwargs"])


def test_trl_rl_rows_load(exported: tuple[Path, dict]) -> None:
    out, manifest = exported
    for name in manifest["files"]["trl-rl"]:
        ds = load(out / name)
        assert ds.features == Features(
            {
                "prompt": List(MESSAGE),
                "answer": Value("string"),
                "info": Value("string"),
                "task_id": Value("string"),
                "family": Value("string"),
                "split": Value("string"),
                "data_source": Value("string"),
                "env_spec": Value("string"),
                "environment": Value("string"),
            }
        )
        for row in ds:
            info = json.loads(row["info"])
            assert info["task_id"] == row["task_id"] and info["rubric"] == row["answer"]
            spec = EnvSpec.model_validate_json(row["env_spec"])
            assert (spec.version, spec.task_id, spec.family) == (1, row["task_id"], row["family"])


def test_sft_rows_load_with_dict_and_string_arguments(
    exported: tuple[Path, dict], tasks: list[AcceptedTask]
) -> None:
    out, manifest = exported
    by_id = {t.task_id: t for t in tasks}
    for fmt in ("verl-sft", "trl-sft"):
        assert manifest["files"][fmt]
        for name in manifest["files"][fmt]:
            ds = load(out / name)
            calls = ds.features["messages"].feature["tool_calls"].feature["function"]
            assert isinstance(calls["arguments"], dict), "dict arguments (HF chat templates)"
            assert calls["name"] == Value("string")
            tool = ds.features["tools"].feature["function"]
            assert set(tool) == {"name", "description", "parameters"}
            for row in ds:
                original = by_id[row["task_id"]].messages()
                assert strip_nulls(row["messages"]) == strip_nulls(with_dict_arguments(original))
                if fmt == "trl-sft":
                    wire = row["messages_wire"]
                    args = [c["function"]["arguments"] for m in wire for c in m["tool_calls"] or []]
                    assert args and all(isinstance(a, str) for a in args)
                    assert [json.loads(a) for a in args] == [
                        json.loads(c["function"]["arguments"])
                        for m in original
                        for c in m.get("tool_calls") or []
                    ]
                    assert json.loads(row["tools_json"]) == strip_nulls(row["tools"])
    trl = load(out / manifest["files"]["trl-sft"][0])
    assert trl.features["messages_wire"].feature["tool_calls"].feature["function"]["arguments"] == Value(
        "string"
    )


def test_accepted_tasks_table_card_and_jsonl(
    exported: tuple[Path, dict], tasks: list[AcceptedTask], tmp_path: Path
) -> None:
    out, manifest = exported
    ds = load(out / "accepted_tasks.parquet")
    assert len(ds) == len(tasks)
    assert ds.features["skills"] == List(Value("string")) and ds.features["criteria"] == Value("string")
    assert AcceptedTask.model_validate(ds[0]).task_id == ds[0]["task_id"]
    card = (out / "README.md").read_text()
    for heading in (
        "## Families",
        "## Difficulty",
        "## Skills",
        "## Interfaces",
        "## Gate statistics",
        "## Provenance",
        "## Splits",
        "## Leakage report",
    ):
        assert heading in card
    assert "| compose | 4 | 4 |" in card and "verdict: no leakage" in card
    assert "compoworld.random_walk" in card and "fam-text-parsing-easy-0" in card
    # the red team section: every compose policy attacked the 4 composed tasks, none earned full reward
    assert "## Red team" in card
    for policy in ("nop", "enumerate", "shotgun", "over-act", "early-stop"):
        assert f"| compose | {policy} | 4 | 0 |" in card, policy
    written = write_all(tasks, tmp_path, formats=["trl-sft"], suffix="jsonl")
    lines = load_dataset("json", data_files=str(tmp_path / written["files"]["trl-sft"][0]), split="train")
    assert "messages_wire" in lines.column_names
    assert set(ROW_FORMATS) == {"verl", "verl-sft", "trl-sft", "trl-rl", "skyrl"}


def test_flatten_schema_keeps_type_description_enum_and_folds_the_rest() -> None:
    nested = {
        "type": "function",
        "function": {
            "name": "book",
            "description": "Book it.",
            "parameters": {
                "type": "object",
                "required": ["when", "who", "missing"],
                "properties": {
                    "when": {"type": ["string", "null"], "description": "ISO date", "format": "date"},
                    "kind": {"type": "string", "enum": ["a", "b"], "description": "kind"},
                    "who": {"type": "array", "description": "guests", "items": {"$ref": "#/$defs/Guest"}},
                    "opts": {"type": "object", "properties": {"x": {"type": "integer"}}},
                },
            },
        },
    }
    flat = flatten_schema(nested)["function"]["parameters"]
    assert flat["required"] == ["when", "who"]
    assert flat["properties"]["kind"] == {"type": "string", "description": "kind", "enum": ["a", "b"]}
    assert (
        flat["properties"]["when"]["type"] == "string"
        and '"format":"date"' in flat["properties"]["when"]["description"]
    )
    assert (
        flat["properties"]["who"]["type"] == "array"
        and "#/$defs/Guest" in flat["properties"]["who"]["description"]
    )
    for prop in flat["properties"].values():
        assert set(prop) <= {"type", "description", "enum"}
    as_string = flatten_schema(nested, nested_as_string=True)["function"]["parameters"]["properties"]
    assert as_string["opts"]["type"] == "string" and "JSON-encoded object" in as_string["opts"]["description"]
