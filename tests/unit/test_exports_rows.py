"""Accepted tasks, leakage-free splits and every trainer export, loaded back with `datasets`."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from datasets import Features, Json, List, Value, load_dataset

from envpipeline.export import verl_sft
from envpipeline.export.rows import flatten_schema, trl_sft_row, with_dict_arguments, with_string_arguments
from envpipeline.export.splits import SplitConfig, assign_splits, leakage_report
from envpipeline.export.token_lengths import chat_text, estimate_tokens, length_setting
from envpipeline.export.tool_names import VALID_TOOL_NAME, ToolNameMap
from envpipeline.export.unified import AcceptedTask, ExportError, Rubric, from_task_record
from envpipeline.export.verl_sft import decode_json_value
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
    # a fresh cache each time: `datasets` keys its cache on the file's path, which pytest reuses
    return load_dataset("parquet", data_files=str(path), split="train", cache_dir=tempfile.mkdtemp())


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


def test_sft_rows_load_exactly_with_json_columns(
    exported: tuple[Path, dict], tasks: list[AcceptedTask]
) -> None:
    """No null padding, arguments decoded once, valid tool names mapped back (issue 13)."""
    out, manifest = exported
    by_id = {t.task_id: t for t in tasks}
    for fmt in ("verl-sft", "trl-sft"):
        assert manifest["files"][fmt]
        for name in manifest["files"][fmt]:
            ds = load(out / name)
            assert ds.features == Features(
                {
                    "messages": List(Json()),
                    "tools": List(Json()),
                    "tool_names": Json(),
                    "task_id": Value("string"),
                    "family": Value("string"),
                }
            )
            for row in ds:
                task = by_id[row["task_id"]]
                original = task.messages()
                assert original is not None
                # exactly what was written: no key of another call or tool padded in with null
                assert null_keys(row["messages"]) == null_keys(original)
                assert null_keys(row["tools"]) == [] and null_keys(row["tool_names"]) == []
                calls = [c for m in row["messages"] for c in m.get("tool_calls") or []]
                originals = [c for m in original for c in m.get("tool_calls") or []]
                assert [c["function"]["arguments"] for c in calls] == [
                    json.loads(c["function"]["arguments"]) for c in originals
                ], "arguments are dicts, decoded exactly once"
                assert all(isinstance(c["function"]["arguments"], dict) for c in calls)
                names = [t["function"]["name"] for t in row["tools"]]
                names += [c["function"]["name"] for c in calls]
                names += [m["name"] for m in row["messages"] if m["role"] == "tool"]
                assert names and all(VALID_TOOL_NAME.match(n) for n in names), names
                back = row["tool_names"]  # safe -> original
                assert [back[t["function"]["name"]] for t in row["tools"]] == [
                    t["function"]["name"] for t in task.tool_schemas()
                ]
                assert [back[c["function"]["name"]] for c in calls] == [
                    c["function"]["name"] for c in originals
                ]
                tools = {t["function"]["name"]: t for t in row["tools"]}
                if "list_services" in tools:
                    assert tools["list_services"]["function"]["parameters"]["properties"] == {}
            # plain pyarrow reads the same JSON values
            table = pq.read_table(out / name)
            first = [json.loads(m) for m in table.column("messages")[0].as_py()]
            assert first == ds[0]["messages"]
    world = next(t for t in tasks if t.family == "world")
    unsafe = [
        t["function"]["name"]
        for t in world.tool_schemas()
        if not VALID_TOOL_NAME.match(t["function"]["name"])
    ]
    assert unsafe, "the world task has dotted / HTTP-route tool names to map"
    row = trl_sft_row(world)
    assert set(row["tool_names"].values()) >= set(unsafe)


def null_keys(value: object, path: str = "") -> list[str]:
    """Paths of dict keys whose value is None (what struct columns pad in)."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found += [f"{path}.{key}"] if item is None else null_keys(item, f"{path}.{key}")
    elif isinstance(value, list):
        for item in value:
            found += null_keys(item, f"{path}[]")
    return found


def test_null_padding_check_catches_struct_columns(tasks: list[AcceptedTask], tmp_path: Path) -> None:
    """The old struct-column writing pads every call with the union of argument names: caught."""
    rows = [trl_sft_row(t) for t in tasks if t.family == "compose"]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "structs.parquet")
    padded = load(tmp_path / "structs.parquet")
    assert any(null_keys(row["messages"]) for row in padded)
    assert any(null_keys(row["tools"]) for row in padded)


def test_arguments_encoded_twice_are_refused() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "cli.exec", "arguments": ""}}
    once = [{"role": "assistant", "content": "", "tool_calls": [call]}]
    once[0]["tool_calls"][0]["function"]["arguments"] = json.dumps({"command": "ls"})
    assert with_dict_arguments(once)[0]["tool_calls"][0]["function"]["arguments"] == {"command": "ls"}
    wire = with_string_arguments(once, ToolNameMap(["cli.exec"]))[0]["tool_calls"][0]["function"]
    assert wire == {"name": "cli__exec", "arguments": '{"command": "ls"}'}
    twice = json.loads(json.dumps(once))
    twice[0]["tool_calls"][0]["function"]["arguments"] = json.dumps(json.dumps({"command": "ls"}))
    with pytest.raises(ValueError, match="encoded twice"):
        with_dict_arguments(twice)


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
    assert lines.column_names == ["messages", "tools", "tool_names", "task_id", "family"]
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


def test_card_configs_load_every_format_by_name(exported: tuple[Path, dict]) -> None:
    out, manifest = exported
    card = (out / "README.md").read_text()
    assert card.startswith("---\n")
    assert "data.custom_cls.path=pkg://envpipeline.export.verl_sft" in card, "how verl reads the SFT rows"
    front = yaml.safe_load(card.split("---\n")[1])
    configs = {c["config_name"]: c["data_files"] for c in front["configs"]}
    assert set(configs) == {"accepted_tasks", *ROW_FORMATS}
    for fmt in ROW_FORMATS:
        # a fresh cache: `datasets` keys its cache on the folder's path, which pytest reuses
        loaded = load_dataset(str(out), fmt, cache_dir=str(out.parent / f"{out.name}-hf-cache"))
        files = {Path(p).stem: p for p in manifest["files"][fmt]}
        assert set(loaded) == set(files), fmt
        for split, path in files.items():
            assert loaded[split].to_list() == load(out / path).to_list(), (fmt, split)
    assert len(load_dataset(str(out), "accepted_tasks")["train"]) == manifest["split_sizes"]["sft"] + sum(
        manifest["split_sizes"][s] for s in ("rl", "eval")
    )


def test_card_states_token_lengths_and_the_settings_to_use(
    exported: tuple[Path, dict], tasks: list[AcceptedTask]
) -> None:
    out, _ = exported
    section = (out / "README.md").read_text().split("## Token lengths")[1].split("## Files")[0]
    rows = [
        line.split(" | ")
        for line in section.splitlines()
        if line.startswith("| trl-sft") or line.startswith("| verl ")
    ]
    settings = {cells[-1].strip(" |") for cells in rows}
    sft = next(cells for cells in rows if cells[0] == "| trl-sft")
    longest = int(sft[5])
    assert f"`max_length` >= {length_setting([longest])}" in settings
    assert any(s.startswith("`max_prompt_length` >= ") for s in settings)
    assert any(s.startswith("`max_response_length` >= ") for s in settings)
    # the longest conversation is thousands of tokens: verl's default max_length 1024 would fail
    assert longest > 1024 and length_setting([longest]) >= longest * 1.1
    compose = next(t for t in tasks if t.family == "compose")
    row = trl_sft_row(compose)
    text = chat_text(row["messages"], row["tools"])
    assert estimate_tokens(text) >= len(text) / 3 and estimate_tokens("a, b") == 3


def test_length_setting_rounds_up_with_headroom() -> None:
    assert length_setting([]) == 0
    assert length_setting([1000]) == 1536 and length_setting([465]) == 512 and length_setting([466]) == 1024


def test_verl_sft_json_columns_decode_once_from_pandas(exported: tuple[Path, dict]) -> None:
    """verl reads Parquet with pandas (JSON text); `decode_json_value` gives the exact objects back."""
    out, manifest = exported
    path = out / manifest["files"]["verl-sft"][0]
    frame = pq.read_table(path).to_pandas()
    assert isinstance(frame["messages"].iloc[0][0], str), "pandas sees JSON text"
    expected = load(path)[0]
    assert decode_json_value(list(frame["messages"].iloc[0])) == expected["messages"]
    assert decode_json_value(frame["tool_names"].iloc[0]) == expected["tool_names"]
    assert decode_json_value(expected["tools"]) == expected["tools"], "decoded values stay as they are"
    with pytest.raises(ModuleNotFoundError, match="verl"):
        verl_sft.EnvpipelineSFTDataset  # noqa: B018 - verl is not installed in this venv
