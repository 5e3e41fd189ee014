"""`envpipeline services import`: reports, --json, --out (corpus format) and one-line errors."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

from envpipeline.cli import main
from envpipeline.services.contract import check_service
from envpipeline.services.library.imported import SPECS
from envpipeline.services.mcp_import import synthesize_service

NOTION_STYLE = {
    "tools": [
        {
            "name": "API-retrieve-a-page",
            "description": "Retrieve a page",
            "inputSchema": {
                "type": "object",
                "properties": {"page_id": {"type": "string"}},
                "required": ["page_id"],
            },
        },
        {
            "name": "API-post-search",
            "description": "Search by title",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "page_size": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                },
            },
        },
        {
            "name": "API-patch-page",
            "description": "Update page properties",
            "inputSchema": {
                "type": "object",
                "properties": {"page_id": {"type": "string"}, "archived": {"type": "boolean"}},
                "required": ["page_id"],
            },
        },
    ]
}


def test_import_reports_implemented_and_simulated_tools_as_json(tmp_path):
    spec = tmp_path / "notion_style.json"
    spec.write_text(json.dumps(NOTION_STYLE))
    result = CliRunner().invoke(
        main, ["services", "import", str(spec), "--json", "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.output)
    assert report["service"] == "notion_style" and report["tools"] == 3 and report["contract"] == "passed"
    assert set(report["implemented"]) | set(report["simulated"]) == {t["name"] for t in NOTION_STYLE["tools"]}
    assert all(reason for reason in report["simulated"].values())
    written = json.loads((tmp_path / "out" / "notion_style.json").read_text())
    assert written["tools"] == NOTION_STYLE["tools"] and written["x-envpipeline"]["service"] == "notion_style"
    cls = synthesize_service("notion_style", written)
    assert check_service(cls) == [], "the written spec re-imports and passes"


def _tool(name: str, properties: dict, required: list[str]) -> dict:
    schema = {"type": "object", "properties": properties, "required": required}
    return {"name": name, "description": name.replace("_", " "), "inputSchema": schema}


#: a vendor-prefixed spec (``acme_`` on every tool) whose get takes a key, not an id
PREFIXED = {
    "tools": [
        _tool("acme_create_ticket", {"title": {"type": "string"}}, ["title"]),
        _tool("acme_list_tickets", {}, []),
        _tool("acme_get_ticket", {"ticket_key": {"type": "string"}}, ["ticket_key"]),
        _tool("acme_update_ticket", {"ticket_id": {"type": "string"}}, ["ticket_id"]),
        _tool("acme_assign_ticket", {"ticket_id": {"type": "string"}}, ["ticket_id"]),
    ]
}


def test_import_report_gives_the_classifications_operations_and_reasons(tmp_path):
    """The report says what the importer decided: the operation after the vendor prefix (not the
    name's first word) and, for each simulated tool, the check it failed (not a guess from its name)."""
    spec = tmp_path / "acme.json"
    spec.write_text(json.dumps(PREFIXED))
    result = CliRunner().invoke(main, ["services", "import", str(spec), "--json"])
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.output)
    assert report["implemented"] == {
        "acme_create_ticket": {"collection": "tickets", "operation": "create"},
        "acme_list_tickets": {"collection": "tickets", "operation": "list"},
    }
    reasons = report["simulated"]
    assert "no required argument carries one's id (required: ticket_key)" in reasons["acme_get_ticket"]
    assert "update of tickets with no argument to change" in reasons["acme_update_ticket"]
    assert reasons["acme_assign_ticket"].startswith("its name has no CRUD verb")
    assert reasons["acme_assign_ticket"].endswith("simulated write (its writes are recorded)")
    assert not any("does not start with" in r for r in reasons.values())


def test_import_of_a_shipped_spec_prints_a_table(tmp_path):
    path = tmp_path / "issue_tracker.json"
    shutil.copy(str(SPECS / "issue_tracker.json"), path)
    result = CliRunner().invoke(main, ["services", "import", str(path), "--name", "tracker"])
    assert result.exit_code == 0, result.output
    assert "tracker: 11 tools, 10 implemented, 1 simulated" in result.output
    assert "simulated    summarize_thread:" in result.output


def test_malformed_spec_exits_non_zero_with_tool_and_schema_path(tmp_path):
    bad = {
        "tools": [
            {
                "name": "create_issue",
                "inputSchema": {
                    "type": "object",
                    "properties": {"labels": {"type": "array", "items": {"$ref": "#/$defs/X"}}},
                },
            }
        ]
    }
    spec = tmp_path / "bad.json"
    spec.write_text(json.dumps(bad))
    result = CliRunner().invoke(main, ["services", "import", str(spec), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert (
        "tool 'create_issue': inputSchema.properties.labels.items: $ref '#/$defs/X' does not resolve"
        in result.output
    )
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "out" / "bad.json").exists()


def test_name_needs_exactly_one_spec(tmp_path):
    a = tmp_path / "a.json"
    a.write_text(json.dumps(NOTION_STYLE))
    result = CliRunner().invoke(main, ["services", "import", str(a), str(a), "--name", "x"])
    assert result.exit_code == 2 and "--name needs exactly one SPEC" in result.output
