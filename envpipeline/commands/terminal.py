"""`envpipeline families ...` and `envpipeline bundle ...`: terminal task bundles from the shell."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click
from rich.console import Console
from rich.table import Table

from envpipeline.commands.common import (
    FiniteFloatRange,
    WritableFolder,
    console,
    emit_json,
    home_option,
    resolve_home,
)
from envpipeline.policies.base import POLICY_KINDS

if TYPE_CHECKING:
    from envpipeline.models.bundle import Difficulty
    from envpipeline.policies.base import Policy, PolicyKind


@click.group("families")
def families_group() -> None:
    """Procedural terminal task families."""


@families_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print families with knobs, presets and variants.")
def families_list(as_json: bool) -> None:
    """List the task families with their skills, knobs and solution variants."""
    from envpipeline.terminal.families.registry import all_families

    families = all_families()
    rows = [
        {
            "name": f.name,
            "category": f.category,
            "description": f.description,
            "skills": f.skills,
            "knobs": f.knob_model.model_json_schema().get("properties", {}),
            "presets": f.presets,
            "variants": ["oracle", *f.variants],
        }
        for f in families.values()
    ]
    if as_json:
        emit_json(rows)
        return
    table = Table(title=f"{len(rows)} task families")
    for column in ("family", "category", "skills", "variants"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["name"], row["category"], ", ".join(row["skills"]), ", ".join(row["variants"]))
    Console().print(table)


@click.group("bundle")
def bundle_group() -> None:
    """Create, check and verify Harbor task bundles."""


@bundle_group.command("new")
@click.argument("family")
@click.option("--seed", default=0, show_default=True, help="Generator seed.")
@click.option(
    "--difficulty", type=click.Choice(["easy", "medium", "hard"]), default="medium", show_default=True
)
@click.option("--variant", default="oracle", show_default=True, help="Solution variant written as solution/.")
@click.option(
    "--out",
    type=WritableFolder(),
    default=None,
    help="Bundle folder. Default: <home>/bundles/<task name>.",
)
@home_option
def bundle_new(
    family: str, seed: int, difficulty: Difficulty, variant: str, out: Path | None, home: Path | None
) -> None:
    """Generate one bundle of FAMILY into --out."""
    from envpipeline.terminal.families.base import write_generated
    from envpipeline.terminal.families.registry import get_family

    fam = get_family(family)
    task = fam.generate(seed, fam.knobs_for(difficulty), difficulty)
    out = out or resolve_home(home, writable=True) / "bundles" / task.name
    write_generated(task, out, variant)
    click.echo(f"wrote {task.name} ({family}, {difficulty}, variant {variant}) to {out}")


@bundle_group.command("check")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--heldout",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Held-out instructions, one JSON string per line (or plain lines).",
)
@click.option(
    "--overlap-threshold",
    default=0.5,
    show_default=True,
    type=FiniteFloatRange(0, 1),
    help="Max n-gram Jaccard vs held-out.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the reports as JSON.")
def bundle_check(
    paths: tuple[Path, ...], heldout: Path | None, overlap_threshold: float, as_json: bool
) -> None:
    """Run the static checks on every bundle (a missing or bad one is reported, never an abort);
    exits 1 if any bundle fails."""
    from envpipeline.terminal.checks import check_bundle

    held = _read_heldout(heldout) if heldout else None
    reports = [check_bundle(p, heldout=held, overlap_threshold=overlap_threshold) for p in paths]
    if as_json:
        emit_json(
            [{**r.model_dump(mode="json"), "status": "passed" if r.passed else "failed"} for r in reports]
        )
    else:
        for report in reports:
            status = "ok" if report.passed else "FAILED"
            click.echo(f"{status:6} {report.bundle}")
            for check in report.checks:
                if not check.passed:
                    click.echo(f"       {check.name}: {check.reason}")
            for warning in report.warnings:
                click.echo(f"       warning: {warning}")
    sys.exit(0 if all(r.passed for r in reports) else 1)


def _read_heldout(path: Path) -> list[str]:
    from envpipeline.textfiles import read_text_file

    lines = [line for line in read_text_file(path, "the held-out file").splitlines() if line.strip()]
    out = []
    for line in lines:
        try:
            value = json.loads(line)
            out.append(value if isinstance(value, str) else json.dumps(value))
        except json.JSONDecodeError:
            out.append(line)
    return out


@bundle_group.command("verify")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--sandbox",
    "backend",
    type=click.Choice(["local", "docker"]),
    default=None,
    help="Sandbox backend (default: $ENVPIPELINE_SANDBOX, else Docker if it answers, else local).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print per bundle: verdict, reasons, rewards, red team and the tails of the solution's and the tests' output.",
)
def bundle_verify(paths: tuple[Path, ...], backend: str | None, as_json: bool) -> None:
    """Gold-verify bundles: oracle = 1 (twice), nop = 0, no red-team policy = 1. Every bundle gets a
    verdict (a missing, unreadable or solution-less one too); exits 1 if any fails."""
    from envpipeline.sandbox.detect import select_sandbox
    from envpipeline.terminal.verify import unverifiable, verify_bundle

    sandbox = select_sandbox(backend)
    results = []
    for path in paths:
        console.print(f"verifying {path} with {sandbox.backend} sandbox ...")
        if not path.is_dir():
            results.append(unverifiable(path, sandbox.backend, "invalid_bundle", f"{path}: not a directory"))
            continue
        try:
            results.append(verify_bundle(path, sandbox))
        except Exception as e:  # noqa: BLE001 - one broken bundle must not stop the batch
            reason = f"verification crashed: {type(e).__name__}: {e}"
            results.append(unverifiable(path, sandbox.backend, "invalid_bundle", reason))
    if as_json:
        emit_json(
            [
                {
                    "bundle": r.bundle,
                    "path": r.path,
                    "backend": r.backend,
                    "verdict": r.verdict,
                    "oracle_reward": r.oracle_rewards[0] if r.oracle_rewards else None,
                    "oracle_rewards": r.oracle_rewards,
                    "nop_reward": r.nop_reward,
                    "reasons": r.reasons,
                    "nondeterministic": r.nondeterministic,
                    "durations": [t.durations for t in r.trials],
                    "red_team": {o.policy: {"reward": o.reward, "verdict": o.verdict} for o in r.red_team},
                    "tails": r.tails(),
                    "substitutions": [x.model_dump() for x in r.substitutions],
                }
                for r in results
            ]
        )
    else:
        for r in results:
            red_team = " ".join(f"{o.policy}={o.reward}" for o in r.red_team if o.policy != "nop")
            click.echo(
                f"{r.verdict:16} oracle={r.oracle_rewards} nop={r.nop_reward} {r.bundle}"
                + (f" red-team: {red_team}" if red_team else "")
            )
            for reason in r.reasons:
                click.echo(f"                 {reason}")
            for sub in r.substitutions:
                click.echo(f"                 image {sub.original} -> {sub.replacement}: {sub.reason}")
    sys.exit(0 if all(r.passed for r in results) else 1)


@bundle_group.command("import")
@click.argument("sources", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=WritableFolder(),
    default=None,
    help="Output folder. Default: <home>/seeds, where the default job picks seeds up.",
)
@home_option
@click.option("--overwrite", is_flag=True, help="Replace bundles already in --out.")
@click.option("--json", "as_json", is_flag=True, help="Print one import report per source as JSON.")
def bundle_import(
    sources: tuple[Path, ...], out: Path | None, home: Path | None, overwrite: bool, as_json: bool
) -> None:
    """Import Terminal-Bench 1 tasks and Harbor bundles into --out (scripts rewritten for offline
    sandboxes); every source is reported, and the exit status is 1 if any failed."""
    out = out or resolve_home(home, writable=True) / "seeds"
    from envpipeline.terminal.seed_import import import_batch

    reports = import_batch(sources, out, overwrite=overwrite)
    if as_json:
        emit_json([r.model_dump(mode="json") for r in reports])
    else:
        for r in reports:
            if not r.ok:
                click.echo(f"FAILED   {r.task} ({r.source}): {r.error}")
                continue
            flags = f", flags: {', '.join(f.name for f in r.flags)}" if r.flags else ""
            click.echo(
                f"imported {r.task} ({r.source_format}) -> {r.out} "
                f"({len(r.rewrites)} rewrites, {len(r.warnings)} warnings{flags})"
            )
    sys.exit(0 if all(r.ok for r in reports) else 1)


@click.command("forge")
@click.option(
    "--target", default=100, show_default=True, type=click.IntRange(min=1), help="Accepted bundles."
)
@click.option(
    "--out",
    type=WritableFolder(),
    default=None,
    help="Output folder (bundles/, decisions.jsonl, trace.json, report.json). Default: <home>/forge.",
)
@home_option
@click.option(
    "--seeds-per-family",
    default=1,
    show_default=True,
    type=click.IntRange(min=0),
    help="Procedural seeds per family (0: only the --seeds bundles).",
)
@click.option(
    "--seeds",
    "seeds_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="A folder of Harbor / Terminal-Bench 1 task folders used as seeds in addition to the "
    "procedural ones (imported like `bundle import`; a folder without solution/ is skipped with a reason).",
)
@click.option(
    "--rollouts",
    default=4,
    show_default=True,
    type=click.IntRange(min=1),
    help="K rollouts per seed for the pass rate.",
)
@click.option(
    "--rollouts-table",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Recorded rollouts (JSONL or .parquet rows {task_id, policy, reward, criteria?, "
    "required_skills?}) instead of running a policy; implies --policy recorded. Seeds the table "
    "gives no skills get their bundle's (tags, else inferred from instruction and tests).",
)
@click.option(
    "--policy",
    "policy_kind",
    type=click.Choice(list(POLICY_KINDS)),
    default=None,
    help="Policy whose pass rates drive selection (default: scripted; recorded with --rollouts-table).",
)
@click.option(
    "--policy-skill",
    "--skill",
    "skill",
    default=0.7,
    show_default=True,
    type=FiniteFloatRange(0, 1),
    help="Skill of the scripted or solver policy, 0..1.",
)
@click.option(
    "--backend", type=click.Choice(["scip", "enumerate", "greedy"]), default="scip", show_default=True
)
@click.option(
    "--mode",
    type=click.Choice(["portfolio", "local"]),
    default="portfolio",
    show_default=True,
    help="Selector mode: portfolio (the paper's recorded run: coverage rows, N = |S|, xi <= 0.2) or "
    "local (one MILP per seed, no coverage).",
)
@click.option(
    "--recipe",
    type=click.Choice(["milp", "few-shot", "self-instruct", "evol-depth", "evol-breadth"]),
    default="milp",
    show_default=True,
    help="How decisions are made: the MILP (Envs-FORGE) or a fixed-recipe baseline of the paper "
    "(a restricted action mask; with --synthesizer llm, the baseline's own prompt).",
)
@click.option(
    "--synthesizer", type=click.Choice(["procedural", "llm"]), default="procedural", show_default=True
)
@click.option(
    "--model", default=None, help="LLM model for --synthesizer llm and --policy llm, e.g. openai/gpt-4o-mini."
)
@click.option("--api-base", default=None, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1.")
@click.option("--api-key-env", default=None, help="Environment variable holding the API key.")
@click.option(
    "--max-attempts", type=click.IntRange(min=1), default=None, help="Attempt budget (default 4 x target)."
)
@click.option("--max-tokens", type=click.IntRange(min=1), default=None, help="Token budget (LLM synthesis).")
@click.option("--sandbox", "sandbox_name", type=click.Choice(["local", "docker"]), default=None)
@click.option("--json", "as_json", is_flag=True, help="Print the accounting as JSON.")
def forge_command(
    target: int,
    out: Path | None,
    home: Path | None,
    seeds_per_family: int,
    seeds_dir: Path | None,
    rollouts: int,
    rollouts_table: Path | None,
    policy_kind: str | None,
    skill: float,
    backend: str,
    mode: str,
    recipe: str,
    synthesizer: str,
    model: str | None,
    api_base: str | None,
    api_key_env: str | None,
    max_attempts: int | None,
    max_tokens: int | None,
    sandbox_name: str | None,
    as_json: bool,
) -> None:
    """Run Envs-FORGE end to end: pass rates, MILP selection, synthesis, gold-verified export."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

    from envpipeline.forge.loop import ForgeBudget
    from envpipeline.forge.passrates import pass_rates_from_rollouts
    from envpipeline.forge.pipeline import forge_run
    from envpipeline.sandbox.detect import select_sandbox
    from envpipeline.terminal.seeds import default_procedural_keys, discover_seed_folders

    out = out or resolve_home(home, writable=True) / "forge"
    seed_keys = default_procedural_keys(seeds_per_family)
    if seeds_dir is not None:
        folder_keys = sorted(discover_seed_folders(seeds_dir))
        if not folder_keys:
            raise click.BadParameter(f"{seeds_dir} holds no task folder (task.toml or task.yaml)")
        seed_keys += folder_keys
    if not seed_keys and rollouts_table is None:
        raise click.BadParameter("no seeds: pass --seeds DIR or --seeds-per-family >= 1")
    policy = _forge_policy(policy_kind, skill, rollouts_table, model, api_base, api_key_env)
    if synthesizer == "llm":
        from envpipeline.llm.client import LLMClient, LLMConfig
        from envpipeline.synth.llm import LLMSynthesizer

        if not model:
            raise click.BadParameter("--synthesizer llm needs --model", param_hint="--model")
        synth = LLMSynthesizer(
            LLMClient(
                LLMConfig(
                    model=model, api_base=api_base, api_key_env=api_key_env, cache_dir=out / "llm-cache"
                )
            ),
            model=model,
        )
    else:
        from envpipeline.synth.procedural import ProceduralSynthesizer

        synth = ProceduralSynthesizer()
    recorded = pass_rates_from_rollouts(rollouts_table) if rollouts_table else None  # refused before any work
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    ) as bars:
        tasks: dict[str, TaskID] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bars.add_task(stage, total=total)
            bars.update(tasks[stage], completed=done)

        summary = forge_run(
            seed_keys,
            out,
            select_sandbox(sandbox_name),
            synth,
            target=target,
            policy=policy,
            rollouts=rollouts,
            backend=backend,
            budget=ForgeBudget(max_attempts=max_attempts, max_tokens=max_tokens),
            progress=progress,
            recorded=recorded,
            seeds_folder=seeds_dir,
            mode=mode,
            recipe=recipe,
        )
    if as_json:
        emit_json(summary)
    else:
        click.echo(
            f"{summary['accepted']}/{target} bundles accepted in {summary['attempts']} attempts "
            f"({summary['task_directories']} task directories, "
            f"{summary['prompt_tokens'] + summary['completion_tokens']} tokens) -> {out / 'bundles'}"
        )
        click.echo(f"recipe: {recipe}; actions: {summary['actions']}; selector: {summary['selector']}")
        for variant, d in summary["difficulty"].items():
            click.echo(
                f"  {variant}: {d['bundles']} bundles, seed p {d['seed']:.3f} -> projected "
                f"{d['projected']:.3f}, measured {d['measured']:.3f} (mean |error| {d['mean_abs_error']:.3f})"
            )
    sys.exit(3 if summary["budget_exhausted"] else 0)


def _forge_policy(
    kind: str | None,
    skill: float,
    rollouts_table: Path | None,
    model: str | None,
    api_base: str | None,
    api_key_env: str | None,
) -> Policy | None:
    """The policy `forge` runs (None with a rollouts table: the recorded pass rates are used)."""
    from envpipeline.policies.registry import PolicyConfig, build_policy

    kind = kind or ("recorded" if rollouts_table else "scripted")
    if rollouts_table is not None and kind != "recorded":
        raise click.BadParameter(f"--rollouts-table goes with --policy recorded, not {kind}")
    if kind == "recorded":
        if rollouts_table is None:
            raise click.BadParameter("--policy recorded needs --rollouts-table", param_hint="--policy")
        return None
    if kind == "llm" and not model:
        raise click.BadParameter("--policy llm needs --model", param_hint="--model")
    return build_policy(
        PolicyConfig(
            kind=cast("PolicyKind", kind),
            skill=skill,
            model=model,
            api_base=api_base,
            api_key_env=api_key_env,
        )
    )
