"""`envpipeline compose`, `services list` and `audit`: CompoWorld from the shell."""

from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from envpipeline.commands.common import (
    WritableFolder,
    console,
    emit_json,
    home_option,
    progress,
    resolve_home,
)
from envpipeline.compose.limits import MAX_WALK_LENGTH
from envpipeline.files import write_atomically

if TYPE_CHECKING:
    from envpipeline.compose.llm_author import LLMAuthor


@click.group("services")
def services_group() -> None:
    """The CompoWorld service library."""


@services_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print services with tools and schemas as JSON.")
def services_list(as_json: bool) -> None:
    """List services with their tools (and schemas with --json)."""
    from envpipeline.services.registry import all_services

    services = all_services()
    if as_json:
        emit_json(
            [
                {
                    "name": n,
                    "title": c.title,
                    "domain": c.domain,
                    "tools": [
                        {**t.json_schema(n)["function"], "writes": t.writes, "simulated": t.simulated}
                        for t in c.tools.values()
                    ],
                }
                for n, c in services.items()
            ]
        )
        return
    table = Table(title=f"{len(services)} services, {sum(len(c.tools) for c in services.values())} tools")
    table.add_column("service")
    table.add_column("domain")
    table.add_column("tools", justify="right")
    table.add_column("simulated", justify="right")
    for name, cls in services.items():
        simulated = sum(t.simulated for t in cls.tools.values())
        table.add_row(name, cls.domain, str(len(cls.tools)), str(simulated))
    Console().print(table)


def _add_import_command() -> None:
    from envpipeline.commands.services_import import services_import

    services_group.add_command(services_import)


_add_import_command()


def cli_partition(
    seed: int, k: int, distractors: int, n_tasks: int, style: str = "balanced", scope: str = "curated"
) -> str:
    """The lake partition (and task `seed_key`) of one `envpipeline compose` call."""
    suffix = ("" if style == "balanced" else f"_{style}") + ("" if scope == "curated" else f"_{scope}")
    return f"cli_s{seed}_k{k}_d{distractors}_n{n_tasks}{suffix}"


@click.command("compose")
@click.option("--tasks", "n_tasks", type=click.IntRange(min=1), required=True, help="Accepted tasks wanted.")
@click.option("--services", "k", default=5, show_default=True, type=click.IntRange(min=2), help="K services.")
@click.option("--distractors", default=5, show_default=True, type=click.IntRange(min=0), help="Distractors.")
@click.option(
    "--walk-length",
    type=click.IntRange(min=3, max=MAX_WALK_LENGTH),
    default=None,
    help="Visits per walk (>= K+1).",
)
@click.option(
    "--instruction-style",
    type=click.Choice(["explicit", "hinted", "goal", "balanced"]),
    default="balanced",
    show_default=True,
    help="Instruction difficulty: explicit steps, hinted, goal-level (names no service or step), "
    "or balanced (a seeded draw per task).",
)
@click.option(
    "--library-scope",
    type=click.Choice(["curated", "all"]),
    default="curated",
    show_default=True,
    help="Services to compose: the curated library, or all (the imported MCP corpus too).",
)
@click.option("--seed", default=0, show_default=True, help="First candidate rng seed.")
@click.option("--max-attempts", type=click.IntRange(min=1), default=None, help="Budget (default 20 x tasks).")
@click.option("--out", type=WritableFolder(), required=True, help="Output folder.")
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary.")
@click.option(
    "--author",
    type=click.Choice(["procedural", "llm"]),
    default="procedural",
    show_default=True,
    help="Instruction author: the templates, or an LLM rewrite kept only when an LLM agent probe solves it.",
)
@click.option(
    "--world-model",
    type=click.Choice(["offline", "llm"]),
    default="offline",
    show_default=True,
    help="Who answers the simulated tools of imported services.",
)
@click.option("--model", default=None, help="LLM model for --author llm / --world-model llm.")
@click.option("--api-base", default=None, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1.")
@click.option("--api-key-env", default=None, help="Environment variable holding the API key.")
@click.option(
    "--probe-tries",
    default=2,
    show_default=True,
    type=click.IntRange(min=1),
    help="LLM author probe episodes.",
)
def compose_command(
    n_tasks: int,
    k: int,
    distractors: int,
    walk_length: int | None,
    instruction_style: str,
    library_scope: str,
    seed: int,
    max_attempts: int | None,
    out: Path,
    home: Path | None,
    as_json: bool,
    author: str = "procedural",
    world_model: str = "offline",
    model: str | None = None,
    api_base: str | None = None,
    api_key_env: str | None = None,
    probe_tries: int = 2,
) -> None:
    """Compose and verify cross-service tasks until N are accepted or the budget runs out."""
    from envpipeline.compose.author import ComposeConfig
    from envpipeline.compose.llm_author import authoring_entries_summary, authoring_entry
    from envpipeline.compose.pipeline import compose_stream
    from envpipeline.compose.recording import StreamedRun
    from envpipeline.process_memory import release_large_blocks_on_free
    from envpipeline.store.arrow_memory import use_lean_arrow
    from envpipeline.store.catalog import refresh_catalog
    from envpipeline.store.lake import Lake

    try:
        config = ComposeConfig.model_validate(
            {
                "services": k,
                "distractors": distractors,
                "walk_length": walk_length,
                "instruction_style": instruction_style,
                "library_scope": library_scope,
            }
        )
    except ValidationError as e:
        raise click.UsageError(
            "; ".join(str(err["msg"]).removeprefix("Value error, ") for err in e.errors())
        ) from e
    home = resolve_home(home, writable=True)  # refused before any candidate is composed
    llm_author = _llm_paths(author, world_model, model, api_base, api_key_env, probe_tries, out)
    budget = max_attempts or 20 * n_tasks
    partition = cli_partition(seed, k, distractors, n_tasks, instruction_style, library_scope)
    # peak memory is what this command is held to
    use_lean_arrow()
    release_large_blocks_on_free()
    lake = Lake(home)
    run = StreamedRun(lake, partition, f"cli-{uuid.uuid4().hex[:12]}", out)
    authored: list[dict[str, Any] | None] = []
    attempts = accepted = 0
    started = time.perf_counter()
    try:
        with progress() as bar:
            accepted_bar = bar.add_task("composing", total=n_tasks)
            for record in compose_stream(n_tasks, config, range(seed, seed + budget), seed_key=partition):
                status = record.status
                attempts += 1
                accepted += status == "accepted"
                if llm_author is not None and status == "accepted":
                    record = llm_author.author(record)
                    authored.append(authoring_entry(record))
                run.add(record, status)  # spooled a chunk at a time: memory holds no more
                bar.advance(accepted_bar, int(status == "accepted"))
        elapsed = time.perf_counter() - started
        run.publish_lake()
        refresh_catalog(home)
        # the output files come after the lake: they never list tasks the lake does not hold
        run.publish_outputs()
    except BaseException:
        run.discard()
        raise
    authoring = authoring_entries_summary(authored) if llm_author is not None else None
    budget_exhausted = accepted < n_tasks
    summary = {
        **run.tally.summary(),
        "attempts": attempts,
        "budget": budget,
        "budget_exhausted": budget_exhausted,
        "seconds": round(elapsed, 3),
        "candidates_per_second": round(attempts / elapsed, 1) if elapsed else None,
        "accepted_per_second": round(accepted / elapsed, 1) if elapsed else None,
        "out": str(out.resolve()),
        "home": str(home),
        "partition": partition,
        **({"authoring": authoring} if authoring is not None else {}),
    }
    write_atomically(out / "summary.json", json.dumps(summary, indent=2, sort_keys=True))
    if as_json:
        emit_json(summary)
    else:
        click.echo(
            f"{summary['accepted']} accepted, {summary['rejected']} rejected in {elapsed:.2f}s -> {out}"
        )
    if budget_exhausted:
        console.print(f"[yellow]budget of {budget} candidates ran out before {n_tasks} were accepted[/]")
        sys.exit(3)


def _llm_paths(
    author: str,
    world_model: str,
    model: str | None,
    api_base: str | None,
    api_key_env: str | None,
    probe_tries: int,
    out: Path,
) -> LLMAuthor | None:
    """Install the chosen world model; the LLM author, or None for the procedural one."""
    from envpipeline.compose.llm_author import AuthorConfig, build_author
    from envpipeline.services.llm_worldmodel import WorldModelConfig, build_world_model, install_world_model

    if "llm" in (author, world_model) and not model:
        raise click.BadParameter("--author llm and --world-model llm need --model", param_hint="--model")
    if world_model == "llm":
        from envpipeline.compose.variants import reset_link_caches

        config = WorldModelConfig(
            kind="llm",
            model=model,
            api_base=api_base,
            api_key_env=api_key_env,
            cache_dir=out / "llm-cache" / "world-model",
        )
        install_world_model(build_world_model(config))
        reset_link_caches()  # links derived before hold the previous model
    return build_author(
        AuthorConfig(
            kind="llm" if author == "llm" else "procedural",
            model=model,
            api_base=api_base,
            api_key_env=api_key_env,
            probe_tries=probe_tries,
            cache_dir=out / "llm-cache" / "author",
        )
    )


@click.command("audit")
@click.argument("task_id")
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print the chain as JSON.")
def audit_command(task_id: str, home: Path | None, as_json: bool) -> None:
    """Print the lineage of a task back to its seed, run and code version."""
    from envpipeline.store.audit import audit_task
    from envpipeline.store.lake import Lake

    chain = audit_task(Lake(resolve_home(home)), task_id)
    if as_json:
        emit_json(chain)
        return
    for depth, hop in enumerate(chain):
        fields = ", ".join(f"{k}={v}" for k, v in hop.items() if k != "asset")
        click.echo(f"{'  ' * depth}{'└─ ' if depth else ''}{hop['asset']}: {fields}")
