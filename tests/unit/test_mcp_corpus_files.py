"""The shipped corpus of public MCP servers' tool lists: every file is a faithful, sourced record.

Each ``envpipeline/services/specs/corpus/<service>.json`` holds one server's ``tools/list`` payload
plus an ``x-envpipeline`` block naming the service and the exact source (repo, path, commit, url).
``corpus_problems`` below lists everything wrong with the folder; the tests run it on the shipped
files (no problem allowed) and on hand-made broken files (each problem must be reported).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

CORPUS = Path(__file__).resolve().parents[2] / "envpipeline" / "services" / "specs" / "corpus"

# The library's built-in service names (16 hand-written modules + the 2 specs in specs/*.json).
BUILT_IN_SERVICES = frozenset(
    [
        "banking",
        "calendar",
        "chat",
        "crm",
        "files",
        "flights",
        "forum",
        "hr",
        "lists",
        "mail",
        "maps",
        "notes",
        "shop",
        "tickets",
        "todo",
        "weather",
        "issues",
        "expenses",
    ]
)
SERVICE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
COMMIT = re.compile(r"^[0-9a-f]{40}$")
SOURCE_FIELDS = ("repo", "path", "commit", "url")
META_FIELDS = ("service", "title", "domain", "server", "source")


def tool_problems(where: str, index: int, tool: Any) -> list[str]:
    """What is wrong with one entry of ``tools`` (named by file and position or tool name)."""
    if not isinstance(tool, dict):
        return [f"{where}: tools[{index}] is not an object"]
    name = tool.get("name")
    label = f"{where}: tool {name!r}" if isinstance(name, str) and name else f"{where}: tools[{index}]"
    problems: list[str] = []
    if not isinstance(name, str) or not name:
        problems.append(f"{label} has no name")
    if "description" in tool and not isinstance(tool["description"], str):
        problems.append(f"{label} description is not a string")
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict):
        return [*problems, f"{label} has no inputSchema object"]
    if schema.get("type") != "object":
        problems.append(f"{label} inputSchema type is {schema.get('type')!r}, not 'object'")
    for key in ("inputSchema", "outputSchema"):
        if key in tool:
            try:
                jsonschema.Draft202012Validator.check_schema(tool[key])
            except jsonschema.SchemaError as error:
                path = "/".join(str(part) for part in error.absolute_path)
                problems.append(f"{label} {key} is not a valid JSON Schema at '/{path}': {error.message}")
    return problems


def file_problems(path: Path) -> tuple[str | None, list[str]]:
    """The service name a corpus file declares (if any) and what is wrong with the file."""
    where = path.name
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        return None, [f"{where}: not valid JSON ({error})"]
    if not isinstance(document, dict):
        return None, [f"{where}: top level is not an object"]
    problems: list[str] = []
    tools = document.get("tools")
    if not isinstance(tools, list) or not tools:
        problems.append(f"{where}: 'tools' is missing or empty")
        tools = []
    names: list[str] = []
    for index, tool in enumerate(tools):
        problems.extend(tool_problems(where, index, tool))
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            names.append(tool["name"])
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        problems.append(f"{where}: duplicate tool names {duplicates}")
    meta = document.get("x-envpipeline")
    if not isinstance(meta, dict):
        return None, [*problems, f"{where}: no 'x-envpipeline' block"]
    for field in META_FIELDS:
        if not meta.get(field):
            problems.append(f"{where}: x-envpipeline.{field} is missing or empty")
    service = meta.get("service")
    if not isinstance(service, str):
        return None, problems
    if not SERVICE_NAME.match(service):
        problems.append(f"{where}: service name {service!r} is not lowercase [a-z0-9_]")
    if service in BUILT_IN_SERVICES:
        problems.append(f"{where}: service name {service!r} is a built-in service")
    if path.stem != service:
        problems.append(f"{where}: file name does not match service {service!r}")
    source = meta.get("source")
    if isinstance(source, dict):
        for field in SOURCE_FIELDS:
            if not isinstance(source.get(field), str) or not source.get(field):
                problems.append(f"{where}: x-envpipeline.source.{field} is missing or empty")
        commit = source.get("commit")
        if isinstance(commit, str) and not COMMIT.match(commit):
            problems.append(f"{where}: source commit {commit!r} is not 40 lowercase hex digits")
        repo = source.get("repo")
        if isinstance(repo, str) and source.get("url") != f"https://github.com/{repo}":
            problems.append(f"{where}: source url {source.get('url')!r} does not point at repo {repo!r}")
    return service, problems


def corpus_problems(folder: Path) -> list[str]:
    """Everything wrong with a corpus folder, including names shared across files."""
    problems: list[str] = []
    owners: dict[str, str] = {}
    for path in sorted(folder.glob("*.json")):
        service, found = file_problems(path)
        problems.extend(found)
        if service is None:
            continue
        if service in owners:
            problems.append(f"{path.name}: service {service!r} already declared by {owners[service]}")
        owners[service] = path.name
    return problems


def corpus_paths() -> list[Path]:
    return sorted(CORPUS.glob("*.json"))


def test_every_shipped_corpus_file_is_well_formed_and_sourced() -> None:
    assert corpus_paths(), f"no corpus files under {CORPUS}"
    assert corpus_problems(CORPUS) == []


def test_every_corpus_service_is_listed_in_a_sources_table_with_its_commit() -> None:
    tables = "\n".join(path.read_text(encoding="utf-8") for path in sorted(CORPUS.glob("SOURCES_*.md")))
    missing = []
    for path in corpus_paths():
        meta = json.loads(path.read_text(encoding="utf-8"))["x-envpipeline"]
        row = f"| {meta['service']} |"
        lines = [line for line in tables.splitlines() if line.startswith(row)]
        if not lines or meta["source"]["commit"] not in lines[0]:
            missing.append(meta["service"])
    assert missing == []


def test_corpus_keeps_real_json_schema_features() -> None:
    """The specs are recorded as servers declare them, not simplified: these features occur."""
    text = "\n".join(path.read_text(encoding="utf-8") for path in corpus_paths())
    for feature in ('"anyOf"', '"$ref"', '"integer"', '"additionalProperties"', '"enum"'):
        assert feature in text, feature


def write(folder: Path, name: str, document: Any) -> None:
    (folder / name).write_text(json.dumps(document), encoding="utf-8")


def good_document(service: str = "sample_server") -> dict[str, Any]:
    return {
        "tools": [
            {
                "name": "get_item",
                "description": "Get one item.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"id": {"type": "integer"}},
                    "required": ["id"],
                },
            }
        ],
        "x-envpipeline": {
            "service": service,
            "title": "Sample",
            "domain": "software",
            "server": "sample-mcp",
            "source": {
                "repo": "owner/sample",
                "path": "src/index.ts",
                "commit": "0123456789abcdef0123456789abcdef01234567",
                "url": "https://github.com/owner/sample",
            },
        },
    }


def test_a_good_hand_made_file_has_no_problem(tmp_path: Path) -> None:
    write(tmp_path, "sample_server.json", good_document())
    assert corpus_problems(tmp_path) == []


@pytest.mark.parametrize(
    ("break_it", "expected"),
    [
        (lambda d: d["x-envpipeline"]["source"].update(commit="main"), "is not 40 lowercase hex"),
        (
            lambda d: d["x-envpipeline"]["source"].update(commit="ABCDEF" + "0" * 34),
            "is not 40 lowercase hex",
        ),
        (lambda d: d["x-envpipeline"]["source"].pop("path"), "source.path is missing"),
        (lambda d: d["x-envpipeline"]["source"].update(url="https://example.com"), "does not point at repo"),
        (lambda d: d["x-envpipeline"].pop("domain"), "x-envpipeline.domain is missing"),
        (lambda d: d.pop("x-envpipeline"), "no 'x-envpipeline' block"),
        (lambda d: d["tools"].append(dict(d["tools"][0])), "duplicate tool names ['get_item']"),
        (lambda d: d.update(tools=[]), "'tools' is missing or empty"),
        (lambda d: d["tools"][0].pop("inputSchema"), "tool 'get_item' has no inputSchema object"),
        (lambda d: d["tools"][0]["inputSchema"].update(type="string"), "inputSchema type is 'string'"),
        (
            lambda d: d["tools"][0]["inputSchema"]["properties"].update(id={"type": "int"}),
            "tool 'get_item' inputSchema is not a valid JSON Schema at '/properties/id/type'",
        ),
        (
            lambda d: d["tools"][0].update(outputSchema={"type": "object", "required": "id"}),
            "tool 'get_item' outputSchema is not a valid JSON Schema",
        ),
    ],
)
def test_each_broken_file_is_reported(tmp_path: Path, break_it: Any, expected: str) -> None:
    document = good_document()
    break_it(document)
    write(tmp_path, "sample_server.json", document)
    problems = corpus_problems(tmp_path)
    assert any(expected in problem for problem in problems), problems


@pytest.mark.parametrize(
    ("service", "expected"),
    [
        ("mail", "is a built-in service"),
        ("issues", "is a built-in service"),
        ("GitHub-MCP", "is not lowercase"),
    ],
)
def test_bad_service_names_are_reported(tmp_path: Path, service: str, expected: str) -> None:
    write(tmp_path, f"{service}.json", good_document(service))
    problems = corpus_problems(tmp_path)
    assert any(expected in problem for problem in problems), problems


def test_file_name_must_match_service(tmp_path: Path) -> None:
    write(tmp_path, "other_name.json", good_document("sample_server"))
    assert any("does not match service" in problem for problem in corpus_problems(tmp_path))


def test_a_service_declared_twice_across_files_is_reported(tmp_path: Path) -> None:
    write(tmp_path, "sample_server.json", good_document("sample_server"))
    write(tmp_path, "sample_server_copy.json", good_document("sample_server"))
    problems = corpus_problems(tmp_path)
    assert any("already declared by sample_server.json" in problem for problem in problems), problems


def test_invalid_json_is_reported(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text('{"tools": [', encoding="utf-8")
    assert any("broken.json: not valid JSON" in problem for problem in corpus_problems(tmp_path))
