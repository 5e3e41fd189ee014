"""Held-out acceptance: import real Terminal-Bench 1 / Harbor task folders, verify them, audit every verdict.

The tasks are not in the repository (never commit them): copy public task folders verbatim into a
folder, one task per sub-folder (a TB1 task has task.yaml, Dockerfile, run-tests.sh, solution.sh or
solution.yaml and tests/; a Harbor task has task.toml, instruction.md, environment/, solution/ and
tests/), then run::

    python bench/heldout_acceptance.py /path/to/heldout/tb1 /path/to/heldout/harbor --sandbox docker

Every task goes through `envpipeline bundle import` and every imported bundle through `envpipeline
bundle verify`. The table shows, per task: import status, import flags and image substitutions, the
verdict and its first reason, and whether the real tests passed in the trial that decided the
verdict, judged from the verifier's own output (pytest's summary line, `go test`'s ok/FAIL lines),
never from the reward file. Two acceptance rules are checked, and the exit status is 1 if either is
broken: no bundle is `verified` unless its real tests passed, and every task that is not verified
(or not imported) carries a reason.

Results (2026-12-03, 2 shared cores; 24 real tasks copied verbatim into /work/scratch/heldout:
16 TB1 adapter tasks from rese1f/terminal-bench-datasets (evoeval 0/7/23/42, aider_polyglot python
affine-cipher/bowling/book-store, cpp clock, go forth, livecodebenchpro 1983a/b, deveval cpp-area /
python-arxiv-digest, swebench-verified astropy-12907 / flask-5014 / requests-1142) and 8 Harbor
tasks (5 from zjysteven/terminal-bench-env, which ship no solution/, and the single-task repositories
ShivamGairola2577/json-transform-harbor-task, Jateloz/kenken-task, McIkenna/python-csv-ingester)):

- docker (4 min 47 s): 17 imported, 7 refused at import (5 no solution/, a schema "2.0" task.toml,
  a task.name Harbor itself rejects); 4 verified (the evoeval tasks; their real tests passed, pytest
  summary "passed"), 2 oracle_failed (deveval: the task-specific image was swapped for the base
  image, tests said "1 failed"), 11 build_failed (apt-get in the Dockerfile, builds run without
  network; 10 of them flagged needs_network_build at import). 0 violations.
- local (11 s): the same 7 refused; 0 verified; 4 oracle_failed ("tests said: /usr/bin/python3: No
  module named pytest": the local sandbox runs the host's Python), 13 build_failed (apt-get without
  network; deveval's quoted COPY "deveval_source_repo/" not found by the local builder). 0 violations.
- Before this run's fixes, the evoeval tasks were red_team_broken on Docker (the tamper policy's
  /app/pytest.py shadowed pytest) and every oracle_failed reason was "oracle rewards [0.0, 0.0],
  expected 1.0" with empty tails (the imported test.sh sent the tests' output only to a file).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
#: pytest's final summary line, e.g. "==== 3 passed, 1 failed in 0.12s ====" (or -q's bare form).
PYTEST_SUMMARY = re.compile(r"^=*\s*((?:\d+ \w+(?:, )?)+) in [\d.]+s", re.MULTILINE)
#: `go test` / `cargo test` style result lines.
GO_OK, GO_FAIL = re.compile(r"^(ok\s|PASS$)", re.MULTILINE), re.compile(r"^(FAIL|--- FAIL)", re.MULTILINE)


def envpipeline(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the envpipeline CLI of this checkout (JSON on stdout, progress on stderr)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run(
        [sys.executable, "-m", "envpipeline.cli", *args], capture_output=True, text=True, env=env, check=False
    )


def task_folders(roots: list[Path]) -> list[Path]:
    """Every task folder directly under `roots` (a root that is itself a task counts as one)."""
    found = []
    for root in roots:
        if (root / "task.yaml").is_file() or (root / "task.toml").is_file():
            found.append(root)
        else:
            found.extend(sorted(p for p in root.iterdir() if p.is_dir()))
    return found


def real_tests_passed(output: str) -> bool | None:
    """Whether the verifier's own test output says every test passed (None: no summary found)."""
    summaries = PYTEST_SUMMARY.findall(output)
    if summaries:
        counts = dict((kind, int(n)) for n, kind in re.findall(r"(\d+) (\w+)", summaries[-1]))
        return counts.get("passed", 0) > 0 and not (
            counts.get("failed") or counts.get("error") or counts.get("errors")
        )
    if GO_FAIL.search(output):
        return False
    if GO_OK.search(output):
        return True
    return None


def import_all(sources: list[Path], out: Path) -> list[dict[str, Any]]:
    """`bundle import --json` over every source: one report per source, never an abort."""
    done = envpipeline("bundle", "import", "--out", str(out), "--overwrite", "--json", *map(str, sources))
    if not done.stdout.strip():
        raise SystemExit(f"bundle import printed nothing (exit {done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def verify_all(bundles: list[str], sandbox: str) -> dict[str, dict[str, Any]]:
    """`bundle verify --json` over every imported bundle, keyed by bundle path."""
    if not bundles:
        return {}
    done = envpipeline("bundle", "verify", "--sandbox", sandbox, "--json", *bundles)
    if not done.stdout.strip():
        raise SystemExit(f"bundle verify printed nothing (exit {done.returncode}): {done.stderr[-2000:]}")
    return {r["path"]: r for r in json.loads(done.stdout)}


def audit_row(report: dict[str, Any], result: dict[str, Any] | None) -> dict[str, Any]:
    """One table row: import status, flags, verdict, reason, real-test outcome and rule violations."""
    flags = [f["name"] for f in report.get("flags", [])]
    subs = [f"{s['original']}->{s['replacement'] or '-'}" for s in report.get("substitutions", [])]
    row: dict[str, Any] = {
        "task": report.get("task") or Path(report["source"]).name,
        "import": report["status"],
        "flags": ",".join(flags) or "-",
        "substitutions": ",".join(subs) or "-",
        "verdict": "-",
        "reason": report.get("error") or "",
        "tests_passed": None,
        "violations": [],
    }
    if result is not None:
        tails = result.get("tails") or {}
        output = (tails.get("tests_stdout") or "") + "\n" + (tails.get("tests_stderr") or "")
        row.update(verdict=result["verdict"], reason="; ".join(result["reasons"]))
        row["tests_passed"] = real_tests_passed(output)
        if result["verdict"] == "verified" and row["tests_passed"] is not True:
            row["violations"].append("verified without a passing test summary in the verifier output")
    if row["verdict"] != "verified" and not row["reason"].strip():
        row["violations"].append("not verified and no reason given")
    return row


def print_table(rows: list[dict[str, Any]], sandbox: str) -> None:
    def cell(value: Any, width: int) -> str:
        text = (
            {True: "yes", False: "no", None: "?"}.get(value, value) if not isinstance(value, str) else value
        )
        return " ".join(str(text).split())[:width].ljust(width)

    columns = [("task", 34), ("import", 8), ("flags", 22), ("substitutions", 42), ("verdict", 15)]
    columns += [("tests_passed", 5), ("reason", 90)]
    print(f"held-out acceptance on the {sandbox} sandbox")
    print(" ".join(cell(name if name != "tests_passed" else "tests", w) for name, w in columns))
    for row in rows:
        print(" ".join(cell(row[name], w) for name, w in columns))
        for violation in row["violations"]:
            print(f"    VIOLATION: {violation}")


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts for the summary line (verdicts, imports, flagged tasks, tests passed, violations)."""
    verdicts: dict[str, int] = {}
    for row in rows:
        verdicts[row["verdict"]] = verdicts.get(row["verdict"], 0) + 1
    return {
        "tasks": len(rows),
        "imported": sum(r["import"] == "imported" for r in rows),
        "flagged": sum(r["flags"] != "-" for r in rows),
        "substituted": sum(r["substitutions"] != "-" for r in rows),
        "verdicts": verdicts,
        "real_tests_passed": sum(r["tests_passed"] is True for r in rows),
        "violations": sum(bool(r["violations"]) for r in rows),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("roots", nargs="+", type=Path, help="folders of real task folders (or task folders)")
    parser.add_argument("--sandbox", choices=["local", "docker"], default="local")
    parser.add_argument("--out", type=Path, help="where the imported bundles go (default: a temp folder)")
    parser.add_argument("--json", action="store_true", help="print the rows and totals as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="heldout-") as scratch:
        out = args.out or Path(scratch) / "bundles"
        reports = import_all(task_folders(args.roots), out)
        imported = [r["out"] for r in reports if r["status"] == "imported"]
        results = verify_all(imported, args.sandbox)
        rows = [audit_row(r, results.get(r["out"]) if r["status"] == "imported" else None) for r in reports]
    summary = totals(rows)
    if args.json:
        print(json.dumps({"sandbox": args.sandbox, "rows": rows, "totals": summary}, indent=1))
    else:
        print_table(rows, args.sandbox)
        print(json.dumps(summary))
    return 1 if summary["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
