"""Import every MCP spec of the corpus: contract failures, simulated share, link coverage, timing.

    PYTHONPATH=. .venv/bin/python bench/import_corpus.py [DIR...] [--no-contract]

DIRs default to ``envpipeline/services/specs/corpus`` (plus the two hand-written specs). Prints
one line per spec and the totals: tools, simulated share (the paper reports 7.1%), the share of
tools that take part in some derived link (hop or action), and the synthesis/contract seconds.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from envpipeline.services.contract import check_service
from envpipeline.services.library.imported import SPECS, spec_meta
from envpipeline.services.links import Action, Hop
from envpipeline.services.mcp_import import synthesize_service


def linked_tools(cls) -> set[str]:
    """Tools named by some link's planted calls (planted once on a fresh state)."""
    import random

    used: set[str] = set()
    for index, link in enumerate(cls.links()):
        state = cls.generate_state(random.Random(3))
        rng = random.Random(index)
        from envpipeline.services import vocab

        plan = link.plant(state, rng, vocab.sample_value(link.consumes, rng))
        used |= {c.tool for c in plan.calls}
        assert isinstance(link, (Hop, Action))
    return used


def main(argv: list[str]) -> int:
    contract = "--no-contract" not in argv
    dirs = [Path(a) for a in argv if not a.startswith("--")] or [Path(str(SPECS)) / "corpus"]
    files = [Path(str(SPECS)) / "issue_tracker.json", Path(str(SPECS)) / "travel_expenses.json"]
    files += [f for d in dirs for f in sorted(d.glob("*.json"))]
    totals = {"tools": 0, "simulated": 0, "linked": 0, "failed": 0, "synth_s": 0.0, "contract_s": 0.0}
    for path in files:
        payload = json.loads(path.read_text())
        meta = spec_meta(payload, path.name)
        start = time.perf_counter()
        try:
            cls = synthesize_service(meta["service"], payload, title=meta.get("title"))
        except Exception as e:  # noqa: BLE001 - a bench reports every failure and goes on
            print(f"{path.name}: SYNTHESIS FAILED {e}")
            totals["failed"] += 1
            continue
        synth = time.perf_counter() - start
        failures = check_service(cls) if contract else []
        checked = time.perf_counter() - start - synth
        tools = len(cls.tools)
        simulated = sum(t.simulated for t in cls.tools.values())
        linked = len(linked_tools(cls))
        totals["tools"] += tools
        totals["simulated"] += simulated
        totals["linked"] += linked
        totals["failed"] += bool(failures)
        totals["synth_s"] += synth
        totals["contract_s"] += checked
        print(
            f"{path.name}: {tools} tools, {simulated} simulated, {linked} in links, "
            f"{len(cls.links())} links, synth {synth:.2f}s, contract {checked:.2f}s, {len(failures)} failures"
        )
        for failure in failures[:8]:
            print(f"    {failure[:240]}")
    n = totals["tools"] or 1
    print(
        f"TOTAL {len(files)} specs, {totals['tools']} tools, simulated {totals['simulated']} "
        f"({totals['simulated'] / n:.1%}), in links {totals['linked']} ({totals['linked'] / n:.1%}), "
        f"{totals['failed']} specs failing, synth {totals['synth_s']:.1f}s, contract {totals['contract_s']:.1f}s"
    )
    return 1 if totals["failed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
