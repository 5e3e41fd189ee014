"""Services imported from MCP tool specs (``envpipeline/services/specs/``).

``issues`` (an issue tracker) and ``expenses`` (travel expenses) come from the two hand-written
specs; every ``specs/corpus/<service>.json`` is one public MCP server's ``tools/list`` with an
``x-envpipeline`` record (``service``, ``title``, ``domain``, ``server``, ``source``). Each is
synthesized by `envpipeline.services.mcp_import.synthesize_service` when the library is first
loaded; tools that fit no CRUD shape are simulated by the offline world model with a state
(`envpipeline.services.mcp_store`).

The contract is not re-run here (it would cost seconds on every load, also inside exported
images): ``tests/unit/test_corpus_contract.py`` runs it on every shipped spec, and
``envpipeline services import`` runs it before a new spec may join (see its help for how to add
one: copy the normalized spec it writes into ``specs/corpus/``).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from envpipeline.errors import SpecError
from envpipeline.services.mcp_import import ImportedService, synthesize_service
from envpipeline.services.registry import register_service

SPECS = resources.files("envpipeline.services") / "specs"
CORPUS = SPECS / "corpus"


def load_spec(filename: str) -> Any:
    """One shipped ``tools/list`` payload, parsed (`filename` relative to ``specs/``)."""
    return json.loads((SPECS / filename).read_text(encoding="utf-8"))


def corpus_files() -> list[str]:
    """The corpus spec files (``corpus/<service>.json``), sorted."""
    if not CORPUS.is_dir():
        return []
    return sorted(f"corpus/{p.name}" for p in CORPUS.iterdir() if p.name.endswith(".json"))


def spec_meta(payload: Any, filename: str) -> dict[str, Any]:
    """The ``x-envpipeline`` record of a spec, with the service name defaulting to the file stem."""
    meta = payload.get("x-envpipeline", {}) if isinstance(payload, dict) else {}
    if not isinstance(meta, dict):
        raise SpecError(f"{filename}: x-envpipeline must be an object")
    stem = filename.rsplit("/", 1)[-1].removesuffix(".json")
    return {"service": stem, **meta}


def synthesize_file(filename: str) -> type[ImportedService]:
    """The service of one shipped spec file (not registered)."""
    payload = load_spec(filename)
    meta = spec_meta(payload, filename)
    try:
        return synthesize_service(
            meta["service"], payload, title=meta.get("title"), domain=meta.get("domain", "imported")
        )
    except SpecError as e:
        raise SpecError(f"{filename}: {e}") from e


IssuesService = register_service(
    synthesize_service("issues", load_spec("issue_tracker.json"), title="Issue Tracker", domain="software")
)
ExpensesService = register_service(
    synthesize_service(
        "expenses", load_spec("travel_expenses.json"), title="Travel Expenses", domain="finance"
    )
)


def _uncurated(cls: type[ImportedService]) -> type[ImportedService]:
    cls.curated = False
    return cls


CORPUS_SERVICES: dict[str, type[ImportedService]] = {
    cls.name: register_service(_uncurated(cls)) for cls in map(synthesize_file, corpus_files())
}
