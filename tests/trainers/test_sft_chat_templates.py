"""SFT rows through the chat templates TRL ships, and one TRL `SFTTrainer` step on them (issue 13).

Runs in the trainer venv (torch, transformers, trl, datasets, tokenizers); nothing is downloaded:
the tokenizer is a byte-level BPE trained here on the exported text, the model a tiny random Qwen2
built from a config. Templates: ``trl/chat_templates/{qwen2_5,qwen3,llama3_1}.jinja`` (trl 1.16),
rendered with transformers' ``apply_chat_template`` exactly as SFTTrainer renders a row.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

datasets = pytest.importorskip("datasets")
tokenizers = pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")
trl = pytest.importorskip("trl")

from envpipeline.export.rows import with_dict_arguments, with_string_arguments  # noqa: E402
from envpipeline.export.tool_names import VALID_TOOL_NAME  # noqa: E402
from envpipeline.export.writers import write_all  # noqa: E402
from envpipeline.models.dataset import AcceptedTask  # noqa: E402
from tests.export_fixture import build_tasks  # noqa: E402
from tests.trainers.tiny import tiny_model  # noqa: E402

TEMPLATES = Path(trl.__file__).parent / "chat_templates"
TEMPLATE_NAMES = ("qwen2_5", "qwen3", "llama3_1")
SPECIAL = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|begin_of_text|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|python_tag|>",
]
NULL_PADDING = '": null'
#: a JSON object rendered as a JSON string: what a template's `tojson` makes of string arguments
DOUBLE_ENCODED = re.compile(r'"(arguments|parameters)": "\{')


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> list[AcceptedTask]:
    return build_tasks(tmp_path_factory.mktemp("trainer-data"))


@pytest.fixture(scope="module")
def exported(tasks: list[AcceptedTask], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("trainer-export")
    return out, write_all(tasks, out, formats=["verl-sft", "trl-sft"])


@pytest.fixture(scope="module")
def sft_rows(exported: tuple[Path, dict], tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out, _ = exported
    # a cache of our own: the shared one keys a folder by its path, and pytest reuses temp paths,
    # so an earlier run's rows came back (they held other task ids)
    cache = str(tmp_path_factory.mktemp("hf-datasets-cache"))
    loaded = datasets.load_dataset(str(out), "trl-sft", cache_dir=cache)
    rows = [row for split in loaded.values() for row in split]
    verl = datasets.load_dataset(str(out), "verl-sft", cache_dir=cache)
    assert sorted(r["task_id"] for s in verl.values() for r in s) == sorted(r["task_id"] for r in rows)
    return rows


@pytest.fixture(scope="module")
def tokenizer(tasks: list[AcceptedTask]):
    """A byte-level BPE (vocab 2,000) trained on our trajectories, with the templates' special tokens."""
    bpe = tokenizers.ByteLevelBPETokenizer()
    texts = [t.reference_messages or t.instruction for t in tasks] + [t.tools for t in tasks]
    bpe.train_from_iterator(texts, vocab_size=2000, special_tokens=SPECIAL, show_progress=False)
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        bos_token="<|begin_of_text|>",
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
    )


def template(name: str) -> str:
    return (TEMPLATES / f"{name}.jinja").read_text(encoding="utf-8")


def render(tokenizer, name: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    text = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False, chat_template=template(name))
    assert isinstance(text, str)
    return text


def calls_of(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c["function"] for m in messages for c in m.get("tool_calls") or []]


def problems(text: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> list[str]:
    """What is wrong in a rendered trajectory: null padding, double-encoded arguments, bad names."""
    found = []
    if NULL_PADDING in text:
        found.append(f"{text.count(NULL_PADDING)} null-padded keys")
    if DOUBLE_ENCODED.search(text):
        found.append("arguments rendered as a JSON string of a JSON object")
    for call in calls_of(messages):
        arguments = call["arguments"]
        if isinstance(arguments, str) or json.dumps(arguments, ensure_ascii=False) not in text:
            found.append(f"arguments of {call['name']} not rendered once as a JSON object")
            break
    names = [t["function"]["name"] for t in tools] + [c["name"] for c in calls_of(messages)]
    names += [m["name"] for m in messages if m["role"] == "tool" and m.get("name")]
    found += [f"invalid tool name {n!r}" for n in names if not VALID_TOOL_NAME.match(n)]
    return found


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_exported_trajectories_render_without_padding_double_encoding_or_bad_names(
    name: str, sft_rows: list[dict[str, Any]], tokenizer
) -> None:
    assert sft_rows and any(r["family"] == "world" for r in sft_rows)
    for row in sft_rows:
        text = render(tokenizer, name, row["messages"], row["tools"])
        assert problems(text, row["messages"], row["tools"]) == [], (name, row["task_id"])
        for tool in row["tools"]:
            assert f'"name": "{tool["function"]["name"]}"' in text
        originals = set(row["tool_names"].values()) - set(row["tool_names"])
        assert not any(f'"name": "{o}"' in text for o in originals), "an original unsafe name leaked"


def struct_padded_rows(tasks: list[AcceptedTask], tmp_path: Path, wire: bool) -> list[dict[str, Any]]:
    """Rows as the previous writer stored them: Arrow structs (union of keys, null-padded), original
    tool names, arguments as dicts or, with `wire`, JSON strings (the dropped ``messages_wire``)."""
    convert = with_string_arguments if wire else with_dict_arguments
    rows = [
        {"messages": convert(t.messages() or []), "tools": t.tool_schemas()}
        for t in tasks
        if t.family == "compose"
    ]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "old.parquet")
    return list(
        datasets.load_dataset(
            "parquet",
            data_files=str(tmp_path / "old.parquet"),
            split="train",
            cache_dir=str(tmp_path / "hf-cache"),
        )
    )


def test_the_render_checks_catch_the_previous_struct_rows(
    tasks: list[AcceptedTask], tokenizer, tmp_path: Path
) -> None:
    padded = struct_padded_rows(tasks, tmp_path, wire=False)[0]
    text = render(tokenizer, "qwen2_5", padded["messages"], padded["tools"])
    assert any("null-padded keys" in p for p in problems(text, padded["messages"], padded["tools"]))
    wire = struct_padded_rows(tasks, tmp_path, wire=True)[0]
    for name in ("qwen2_5", "llama3_1"):
        text = render(tokenizer, name, wire["messages"], wire["tools"])
        assert "arguments rendered as a JSON string of a JSON object" in problems(
            text, wire["messages"], wire["tools"]
        ), name
    world = next(t for t in tasks if t.family == "world")
    raw = with_dict_arguments(world.messages() or [])
    assert any("invalid tool name" in p for p in problems("", raw, world.tool_schemas()))


def test_padding_figures_before_and_after(
    tasks: list[AcceptedTask], sft_rows: list[dict[str, Any]], tokenizer, tmp_path: Path
) -> None:
    """The same compose trajectory, previous struct rows vs exported rows (printed with -s): the
    first composed task the split gives to SFT (the split goes by task id)."""
    sft_ids = {r["task_id"] for r in sft_rows}
    composed = [t for t in tasks if t.family == "compose"]
    index, task_id = next((i, t.task_id) for i, t in enumerate(composed) if t.task_id in sft_ids)
    before = struct_padded_rows(tasks, tmp_path, wire=False)[index]
    after = next(r for r in sft_rows if r["task_id"] == task_id)
    for name in TEMPLATE_NAMES:
        old = render(tokenizer, name, before["messages"], before["tools"])
        new = render(tokenizer, name, after["messages"], after["tools"])
        print(
            f"{name}: before {len(old):,} chars, {old.count(NULL_PADDING)} '\": null'; "
            f"after {len(new):,} chars, {new.count(NULL_PADDING)} '\": null'"
        )
        assert new.count(NULL_PADDING) == 0 < old.count(NULL_PADDING)
        assert len(new) < len(old)


def test_sft_trainer_loads_our_rows_and_trains_a_step(
    exported: tuple[Path, dict], tokenizer, tmp_path: Path
) -> None:
    out, _ = exported
    dataset = datasets.load_dataset(str(out), "trl-sft", split="sft", cache_dir=str(tmp_path / "hf-cache"))
    assert dataset.features["messages"] == datasets.List(datasets.Json())
    tokenizer.chat_template = template("qwen2_5")
    model = tiny_model(tokenizer)
    args = trl.SFTConfig(
        output_dir=str(tmp_path / "sft"),
        max_steps=1,
        per_device_train_batch_size=1,
        max_length=1024,
        learning_rate=1e-3,
        report_to=[],
        save_strategy="no",
        logging_steps=1,
        use_cpu=True,
    )
    trainer = trl.SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer)
    first = trainer.train_dataset[0]
    rendered = tokenizer.decode(first["input_ids"])
    assert "<tool_call>" in rendered and NULL_PADDING not in rendered
    before = [p.detach().clone() for p in model.parameters()]
    result = trainer.train()
    assert result.global_step == 1 and result.training_loss > 0
    assert any(not (a == b).all() for a, b in zip(before, model.parameters(), strict=True)), "weights moved"


def verl_dataset_classes() -> tuple[type, type]:
    """verl's MultiTurnSFTDataset and ours, loaded the way verl's SFT trainer loads ``data.custom_cls``.

    verl 0.9.1 imports transformers' Qwen2-VL internals that transformers 5.23 renamed; that one
    module (Qwen-VL position ids, unused for text) is stubbed so the dataset module imports.
    """
    pytest.importorskip("verl")
    import sys
    import types

    if "verl.models.transformers.qwen2_vl" not in sys.modules:
        try:
            importlib.import_module("verl.models.transformers.qwen2_vl")
        except ImportError:
            stub = types.ModuleType("verl.models.transformers.qwen2_vl")
            stub.get_rope_index = None  # pyright: ignore[reportAttributeAccessIssue]
            sys.modules["verl.models.transformers.qwen2_vl"] = stub
    from verl.utils.dataset.multiturn_sft_dataset import MultiTurnSFTDataset
    from verl.utils.import_utils import load_extern_object

    ours = load_extern_object("pkg://envpipeline.export.verl_sft", "EnvpipelineSFTDataset")
    assert isinstance(ours, type) and issubclass(ours, MultiTurnSFTDataset)
    return MultiTurnSFTDataset, ours


def test_verl_multiturn_sft_dataset_reads_our_rows_through_custom_cls(
    exported: tuple[Path, dict], tokenizer
) -> None:
    base, ours = verl_dataset_classes()
    out, manifest = exported
    path = str(out / next(p for p in manifest["files"]["verl-sft"] if "/sft." in p))
    tokenizer.chat_template = template("qwen2_5")
    config = {"max_length": 32768, "truncation": "error", "messages_key": "messages", "tools_key": "tools"}
    dataset = ours(parquet_files=path, tokenizer=tokenizer, config=config)
    for index in range(len(dataset)):
        item = dataset[index]
        text = tokenizer.decode(item["input_ids"][item["attention_mask"].bool()])
        assert "<tool_call>" in text and "<tool_response>" in text
        assert NULL_PADDING not in text and not DOUBLE_ENCODED.search(text)
        assert 0 < int(item["loss_mask"].sum()) < int(item["attention_mask"].sum()), "assistant turns only"
    # verl's own class sees the JSON text, not messages: the custom class is needed
    with pytest.raises((TypeError, AttributeError, IndexError)):
        base(parquet_files=path, tokenizer=tokenizer, config=config)[0]
