"""`envpipeline worlds ...`: build and gate WildAWM persona worlds, serve one world day."""

from __future__ import annotations

import json
from pathlib import Path

import click

from envpipeline.commands.common import WritableFolder, home_option, resolve_home
from envpipeline.commands.worlds_serve import serve_command


@click.group("worlds")
def worlds_group() -> None:
    """WildAWM persona worlds across GUI, CLI and MCP."""


@worlds_group.command("build")
@click.option("--personas", "n_personas", default=3, show_default=True, type=click.IntRange(min=1))
@click.option("--days", default=5, show_default=True, type=click.IntRange(min=1), help="Days per persona.")
@click.option("--seed", default=0, show_default=True, help="Persona and world seed.")
@click.option("--tasks-per-day", default=3, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--out",
    type=WritableFolder(),
    default=None,
    help="Worlds folder. Default: <home>/worlds, where `worlds serve` looks.",
)
@home_option
@click.option("--no-live", is_flag=True, help="Skip the live-health check (web app + MCP server) per day.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print worlds, tasks, gate results and metrics as JSON."
)
@click.option(
    "--generator",
    type=click.Choice(["procedural", "llm"]),
    default="procedural",
    show_default=True,
    help="llm: personas, event skills, tasks and the world judge through --model (see --llm-stages).",
)
@click.option("--model", default=None, help="litellm model for --generator llm, e.g. openai/gpt-4o-mini.")
@click.option("--api-base", default=None, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1.")
@click.option("--api-key-env", default=None, help="Environment variable holding the API key (never the key).")
@click.option(
    "--llm-stages",
    default="all",
    show_default=True,
    help="Comma list of the stages that use the LLM: personas, skills, tasks, world_judge, task_judge "
    "('all' = every one but task_judge); the others stay procedural.",
)
@click.option(
    "--llm-skills", default=3, show_default=True, type=click.IntRange(min=0), help="Event skills to ask for."
)
@click.option(
    "--llm-cache",
    type=WritableFolder(),
    default=None,
    help="LLM response cache folder. Default: <out>/llm-cache.",
)
def worlds_build(
    n_personas: int,
    days: int,
    seed: int,
    tasks_per_day: int,
    out: Path | None,
    home: Path | None,
    no_live: bool,
    as_json: bool,
    generator: str,
    model: str | None,
    api_base: str | None,
    api_key_env: str | None,
    llm_stages: str,
    llm_skills: int,
    llm_cache: Path | None,
) -> None:
    """Build persona worlds day by day, synthesize cross-interface tasks and gate them."""
    if generator == "llm" and not model:
        raise click.BadParameter("--generator llm needs --model", param_hint="--model")
    if generator == "procedural" and (model or api_base or api_key_env):
        raise click.BadParameter(
            "--model/--api-base/--api-key-env only apply with --generator llm", param_hint="--generator"
        )
    out = out or resolve_home(home, writable=True) / "worlds"  # refused before the heavy imports

    from rich.console import Console

    with Console(stderr=True).status(f"building {n_personas} worlds x {days} days and gating tasks ..."):
        if generator == "llm" and model:
            summary = _build_llm(
                model,
                api_base,
                api_key_env,
                llm_stages,
                llm_skills,
                llm_cache or out / "llm-cache",
                n_personas,
                days,
                seed,
                out,
                tasks_per_day,
                not no_live,
            )
        else:
            from envpipeline.worlds.pipeline import build_and_gate

            summary = build_and_gate(
                n_personas, days, seed, out, tasks_per_world_day=tasks_per_day, live_health=not no_live
            )
    if as_json:
        click.echo(json.dumps(summary, indent=2, sort_keys=True, default=str))
        return
    tasks = summary["tasks"]
    click.echo(
        f"worlds: {len(summary['worlds'])}; tasks: {tasks['accepted']} accepted of {tasks['candidates']}"
    )
    click.echo(f"interfaces: {', '.join(summary['interfaces_used'])}; difficulty: {summary['difficulty']}")
    div = summary["metrics"]["tasks"]
    click.echo(f"task diversity: Vendi {div['vendi']} entity-masked (raw {div['vendi_raw']}) over {div['n']}")
    click.echo("gates: " + ", ".join(f"{k} {v['passed']}/{v['total']}" for k, v in summary["gates"].items()))
    if "llm" in summary:
        report, usage = summary["llm"], summary["llm"]["usage"]
        click.echo(
            f"llm ({', '.join(report['stages'])}): {usage['calls']} calls ({usage['cached_calls']} cached), "
            f"{usage['prompt_tokens']}+{usage['completion_tokens']} tokens; skills admitted: "
            f"{', '.join(report['skills']['admitted']) or 'none'}; tasks synthesized: "
            f"{report['tasks']['synthesized']} of {report['tasks']['requested']}"
        )
    click.echo(f"written to {out} (tasks.jsonl, summary.json)")


def _build_llm(
    model: str,
    api_base: str | None,
    api_key_env: str | None,
    stages: str,
    skills: int,
    cache: Path,
    n_personas: int,
    days: int,
    seed: int,
    out: Path,
    tasks_per_day: int,
    live_health: bool,
) -> dict:
    """`build_and_gate_llm` with a client for `model` (the stages' config validated first)."""
    from envpipeline.llm.client import LLMClient, LLMConfig
    from envpipeline.worlds.llm.config import WorldsLLMConfig, parse_stages
    from envpipeline.worlds.llm.run import build_and_gate_llm

    config = WorldsLLMConfig(stages=parse_stages(stages), skills=skills)
    client = LLMClient(LLMConfig(model=model, api_base=api_base, api_key_env=api_key_env, cache_dir=cache))
    return build_and_gate_llm(
        client, config, n_personas, days, seed, out, tasks_per_day, live_health=live_health
    )


worlds_group.add_command(serve_command)
