"""Import seed folders in batches: Terminal-Bench 1 tasks and Harbor bundles, one report each.

A batch never stops at a bad folder: every source gets an `ImportReport`, failed ones with the
reason in `error` (and nothing written). Harbor bundles are copied as they are, except that
their shell scripts (solution/*.sh, tests/*.sh including test.sh) go through the same offline
rewrite as TB1 scripts (`shell_rewrite`), and their images through the same resolution
(`images`: FROM lines and ``[environment].docker_image``; substitutions written into
environment/Dockerfile, images nothing stands in for flagged ``needs_image``), every change listed
in the report.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

from envpipeline.errors import ConfigError
from envpipeline.models.bundle import Bundle, BundlePaths
from envpipeline.terminal.bundle import read_bundle, task_config_warnings, write_files
from envpipeline.terminal.checks import check_path_safety
from envpipeline.terminal.images import resolve_bundle_images
from envpipeline.terminal.import_report import ImportReport, Schema
from envpipeline.terminal.importer import Draft, import_terminal_bench, safe_name, source_files
from envpipeline.terminal.offline import rewrite_dockerfile

#: What can go wrong reading one source folder (anything else is a bug and propagates).
PER_BUNDLE_ERRORS = (ConfigError, OSError, UnicodeDecodeError, ValueError, TypeError)


def import_harbor_bundle(
    source_dir: str | Path, out_dir: str | Path, *, overwrite: bool = False
) -> ImportReport:
    """Copy a Harbor bundle to `out_dir` with its shell scripts rewritten for offline sandboxes.

    Raises ConfigError for a folder that fails the path check (a linked solution/, tests/ or
    environment/, a link leaving the bundle: nothing of it is read or copied), is not a readable
    Harbor bundle, has no solution/solve.sh (no oracle: it cannot be gold-verified), or a
    non-empty `out_dir`.
    """
    src, out = Path(source_dir), Path(out_dir)
    paths = BundlePaths(src)
    safety = check_path_safety(paths)
    if not safety.passed:
        raise ConfigError(f"{src}: path check failed: {safety.reason}")
    bundle = read_bundle(src)
    if not paths.solve_sh.is_file():
        raise ConfigError(
            f"{src}: no solution/solve.sh: the bundle has no oracle, so it cannot be gold-verified"
        )
    if not paths.test_sh.is_file():
        raise ConfigError(f"{src}: no tests/test.sh: the bundle has no verifier")
    if out.exists() and any(out.iterdir()) and not overwrite:
        raise ConfigError(f"{out}: not empty (pass overwrite=True to replace it)")
    warnings = [f"task.toml: {w}" for w in task_config_warnings(bundle.config)]
    d = Draft(src, set(source_files(src, warnings)), warnings=warnings)
    d.copy_scripts("solution/", set())
    d.copy_scripts("tests/", set())
    for rel in sorted(p for p in d.present if not p.startswith(("solution/", "tests/"))):
        d.files[rel] = (src / rel).read_bytes()
    _resolve_images(d, bundle)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    write_files(out, d.files)
    return ImportReport(
        task=bundle.name,
        source=str(src),
        out=str(out),
        substitutions=d.subs,
        rewrites=d.rewrites,
        flags=d.flags,
        warnings=d.warnings,
        source_format="harbor",
    )


def _resolve_images(d: Draft, bundle: Bundle) -> None:
    """Base images resolved as the TB1 importer does; network build lines flagged."""
    images = resolve_bundle_images(bundle)
    if images.dockerfile_text is not None:
        d.files["environment/Dockerfile"] = images.dockerfile_text
    d.subs += images.substitutions()
    d.flags += images.needs_image_flags()
    dockerfile = d.files.get("environment/Dockerfile")
    if dockerfile is not None:
        text = dockerfile if isinstance(dockerfile, str) else dockerfile.decode(errors="replace")
        d.flag_network_build(rewrite_dockerfile(text).network_lines)


def import_bundle(
    source_dir: str | Path,
    out_dir: str | Path,
    *,
    schema: Schema = "1.0",
    org: str = "terminal-bench",
    overwrite: bool = False,
) -> ImportReport:
    """Import one folder: a Harbor bundle (task.toml) or a Terminal-Bench 1 task (task.yaml)."""
    src = Path(source_dir)
    if (src / "task.toml").is_file():
        return import_harbor_bundle(src, out_dir, overwrite=overwrite)
    if (src / "task.yaml").is_file():
        return import_terminal_bench(src, out_dir, schema=schema, org=org, overwrite=overwrite)
    raise ConfigError(f"{src}: neither task.toml (Harbor) nor task.yaml (Terminal-Bench 1)")


def import_batch(
    sources: Iterable[str | Path],
    out: str | Path,
    *,
    schema: Schema = "1.0",
    org: str = "terminal-bench",
    overwrite: bool = False,
) -> list[ImportReport]:
    """Import every source into `out/<name>`; a bad source becomes a failed report, never an abort."""
    reports = []
    for source in sources:
        src = Path(source)
        name = safe_name(src.resolve().name)
        target = Path(out) / name
        try:
            reports.append(import_bundle(src, target, schema=schema, org=org, overwrite=overwrite))
        except PER_BUNDLE_ERRORS as e:
            kind = (
                "harbor"
                if (src / "task.toml").is_file()
                else "terminal-bench-1"
                if (src / "task.yaml").is_file()
                else "unknown"
            )
            reports.append(
                ImportReport(task=name, source=str(src), out=str(target), error=str(e), source_format=kind)
            )
    return reports


def import_many(
    root: str | Path,
    out: str | Path,
    *,
    schema: Schema = "1.0",
    org: str = "terminal-bench",
    overwrite: bool = False,
) -> list[ImportReport]:
    """Import every task folder (one holding task.yaml or task.toml) under `root` into `out/<name>`."""
    root = Path(root)
    found = {p.parent for pattern in ("task.yaml", "task.toml") for p in root.rglob(pattern)}
    return import_batch(sorted(found), out, schema=schema, org=org, overwrite=overwrite)
