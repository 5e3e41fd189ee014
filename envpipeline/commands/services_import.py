"""`envpipeline services import SPEC.json...`: MCP ``tools/list`` files become library services.

Each spec is synthesized (`mcp_import.synthesize_service`), its generated contract is run, and
the result is reported: implemented tools (with their typed collection and operation) and
simulated tools (with the reason). A bad spec or a failed contract ends with a one-line error and
exit status 1; nothing is written for it.

With ``--out DIR`` each accepted service is written as ``DIR/<service>.json``: the original
``tools`` plus an ``x-envpipeline`` record (service, title, domain, source file, tool counts) —
exactly the corpus format — and ``DIR/<service>.report.json`` (the machine-readable report). To
add it to the library, copy ``<service>.json`` into ``envpipeline/services/specs/corpus/``
(fill in ``source`` with the server's repository, path and commit): every file there is
registered on load, and ``tests/unit/test_corpus_contract.py`` runs its contract.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from envpipeline.commands.common import WritableFolder, emit_json
from envpipeline.errors import SpecError
from envpipeline.files import write_atomically
from envpipeline.services.mcp_import import ImportedService, synthesis_report, verified_service
from envpipeline.services.mcp_values import words

if TYPE_CHECKING:
    from envpipeline.services.llm_synthesis import SynthesizerConfig


def service_name_for(path: Path, payload: Any) -> str:
    """The service name of a spec file: its ``x-envpipeline.service``, else the file stem."""
    meta = payload.get("x-envpipeline") if isinstance(payload, dict) else None
    if isinstance(meta, dict) and isinstance(meta.get("service"), str):
        return meta["service"]
    return "_".join(words(re.sub(r"[^A-Za-z0-9]+", "_", path.stem))) or "imported"


def simulated_reason(cls: type[ImportedService], tool: str) -> str:
    """Why a tool is simulated (what the classification found), and whether its writes are recorded."""
    kind = "write (its writes are recorded)" if cls.tools[tool].writes else "read"
    return f"{cls.simulated_reasons[tool]}; simulated {kind}"


def report_of(cls: type[ImportedService], source: Path) -> dict[str, Any]:
    """The machine-readable import report of one accepted service."""
    summary = synthesis_report(cls)
    implemented = {
        tool: {"collection": coll, "operation": cls.operations[tool]}
        for coll, tools in cls.collections.items()
        for tool in tools
        if not cls.tools[tool].simulated
    }
    return {
        "service": cls.name,
        "title": cls.title,
        "domain": cls.domain,
        "source": str(source),
        "tools": summary.tools,
        "implemented": dict(sorted(implemented.items())),
        "simulated": {t: simulated_reason(cls, t) for t in summary.simulated_tools},
        "simulated_share": summary.simulated_share,
        "links": len(cls.links()),
        "contract": "passed",
    }


def import_one(
    path: Path, name: str | None, out: Path | None, synthesizer: SynthesizerConfig | None = None
) -> dict[str, Any]:
    """Synthesize (by name shape, or from an LLM plan), contract-check and (with `out`) write one spec."""
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SpecError(f"{path}: cannot read a JSON tools/list: {e}") from e
    service = name or service_name_for(path, payload)
    meta = payload.get("x-envpipeline", {}) if isinstance(payload, dict) else {}
    meta = meta if isinstance(meta, dict) else {}
    try:
        if synthesizer is not None and synthesizer.kind == "llm":
            from envpipeline.services.llm_synthesis import synthesize_by_config

            result = synthesize_by_config(service, payload, synthesizer)
            if result.service is None:
                raise SpecError(
                    f"service '{service}': the model's plans failed ({len(result.attempts)} replies): "
                    + "; ".join(result.reasons)
                )
            cls = result.service
        else:
            cls = verified_service(
                service, payload, title=meta.get("title"), domain=meta.get("domain", "imported")
            )
    except SpecError as e:
        raise SpecError(f"{path}: {e}") from e
    report = report_of(cls, path)
    report["synthesizer"] = synthesizer.kind if synthesizer is not None else "procedural"
    if out is not None:
        tools = payload["tools"] if isinstance(payload, dict) and "tools" in payload else payload
        record = {**meta, "service": service, "title": cls.title, "domain": cls.domain}
        record.setdefault("source", {"file": path.name})
        write_atomically(
            out / f"{service}.json", json.dumps({"tools": tools, "x-envpipeline": record}, indent=2) + "\n"
        )
        write_atomically(out / f"{service}.report.json", json.dumps(report, indent=2, sort_keys=True) + "\n")
    return report


@click.command("import")
@click.argument(
    "specs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option("--json", "as_json", is_flag=True, help="Print the reports as JSON.")
@click.option(
    "--name",
    default=None,
    help="Service name (one spec only); default: x-envpipeline.service or the file stem.",
)
@click.option(
    "--out",
    type=WritableFolder(),
    default=None,
    help="Write <service>.json (corpus format) and <service>.report.json here.",
)
@click.option(
    "--synthesizer",
    type=click.Choice(["procedural", "llm"]),
    default="procedural",
    show_default=True,
    help="Who maps tools onto collections: by name shape, or an LLM plan (both held to the contract).",
)
@click.option("--model", default=None, help="LLM model for --synthesizer llm, e.g. openai/gpt-4o-mini.")
@click.option("--api-base", default=None, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1.")
@click.option("--api-key-env", default=None, help="Environment variable holding the API key.")
def services_import(
    specs: tuple[Path, ...],
    as_json: bool,
    name: str | None,
    out: Path | None,
    synthesizer: str = "procedural",
    model: str | None = None,
    api_base: str | None = None,
    api_key_env: str | None = None,
) -> None:
    """Import MCP tools/list files: synthesize, run the contract, report implemented vs simulated tools.

    To add an accepted service to the library, copy DIR/<service>.json from --out into
    envpipeline/services/specs/corpus/ and record its source (repo, path, commit).
    """
    if name is not None and len(specs) != 1:
        raise click.UsageError("--name needs exactly one SPEC")
    from envpipeline.services.llm_synthesis import SynthesizerConfig

    if synthesizer == "llm" and not model:
        raise click.BadParameter("--synthesizer llm needs --model", param_hint="--model")
    config = SynthesizerConfig(
        kind="llm" if synthesizer == "llm" else "procedural",
        model=model,
        api_base=api_base,
        api_key_env=api_key_env,
        cache_dir=out / "llm-cache" if out is not None else None,
    )
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    reports = []
    for path in specs:
        try:
            reports.append(import_one(path, name, out, config))
        except SpecError as e:
            raise click.ClickException(str(e).replace("\n", " ")) from e
    if as_json:
        emit_json(reports)
        return
    for r in reports:
        click.echo(
            f"{r['service']}: {r['tools']} tools, {len(r['implemented'])} implemented, "
            f"{len(r['simulated'])} simulated ({r['simulated_share']:.0%}), {r['links']} links, contract passed"
        )
        for tool, info in r["implemented"].items():
            click.echo(f"  implemented  {tool}: {info['operation']} on {info['collection']}")
        for tool, reason in r["simulated"].items():
            click.echo(f"  simulated    {tool}: {reason}")
