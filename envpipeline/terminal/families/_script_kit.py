"""The one kit every family builds its verifier scripts and solutions from.

Not a family (it registers nothing). Verifier scripts (``tests/test_outputs.py``) are plain stdlib
Python with the expected result embedded as ``EXPECTED``, in one of two styles:

- `test_script`: a `run()` body calls ``check(name, condition)`` for every check; any exception
  or failed check exits non-zero and every failed check is named.
- `fail_fast_script`: a top-level body calls ``fail(message)``, which names the first thing that
  is wrong and exits non-zero.

Solutions share one program between the oracle and the partial variants, which differ only
where a variant misses its edge case, in one of two styles:

- `all_solutions`: one Python program parameterized by ``MISSED`` (the set of edge cases it
  misses; ``VARIANT`` names the single one, or ``"oracle"``).
- `edited_solutions`: the oracle's program, and per variant the same program with a few textual
  edits (`apply_edits`), each run by `heredoc_solve`.

A `SolverProgram` holds either form and writes a solution missing any subset of the edge cases
(edits of several variants applied in turn): the content-sensitive solver policies submit those.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

_TEST_HEAD = '''"""Checks the final state of /app (generated; stdlib only)."""
import json
import os
import sys
import traceback

EXPECTED = json.loads(__EXPECTED__)
FAILED = []


def check(name, condition):
    """Record one named check."""
    print(("PASS " if condition else "FAIL ") + name)
    if not condition:
        FAILED.append(name)


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def run():
'''

_TEST_TAIL = """

if __name__ == "__main__":
    try:
        run()
    except Exception:
        traceback.print_exc()
        FAILED.append("exception")
    if FAILED:
        print("failed checks: " + ", ".join(FAILED))
        sys.exit(1)
    print("all checks passed")
"""


def test_script(expected: Any, body: str) -> str:
    """A test_outputs.py whose `run()` is `body` (unindented source) with `EXPECTED` embedded."""
    head = _TEST_HEAD.replace("__EXPECTED__", repr(json.dumps(expected, sort_keys=True)))
    return head + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + _TEST_TAIL


_FAIL_FAST_HEAD = """
EXPECTED = __EXPECTED__


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


"""

_FAIL_FAST_TAIL = 'print("all checks passed")\n'


def fail_fast_script(
    expected: Any, body: str, *, imports: Iterable[str] = (), embed: Literal["json", "literal"] = "json"
) -> str:
    """A test_outputs.py whose top-level `body` calls `fail(message)` on the first wrong thing.

    Args:
        expected: the expected result, JSON-serializable.
        body: module-level source after the preamble (helpers, then the checks); surrounding blank
            lines are dropped.
        imports: stdlib modules the body uses (``sys``, and ``json`` for a JSON embedding, are added).
        embed: ``json`` embeds ``EXPECTED = json.loads('<json text>')`` (key order kept); ``literal``
            embeds the JSON-normalized value as a Python literal.
    """
    modules = {"sys", *imports} | ({"json"} if embed == "json" else set())
    if embed == "json":
        value = f"json.loads({json.dumps(expected)!r})"
    else:
        value = repr(json.loads(json.dumps(expected)))
    head = "".join(f"import {m}\n" for m in sorted(modules)) + _FAIL_FAST_HEAD.replace("__EXPECTED__", value)
    return head + body.strip("\n") + "\n" + _FAIL_FAST_TAIL


def python_solve(
    code: str, variant: str, data: Any = None, missed: Iterable[str] | None = None
) -> dict[str, str]:
    """A solve.sh that runs `code` in /app with `VARIANT`, `MISSED` (the edge cases it misses:
    ``{variant}`` unless given, empty for the oracle) and optional embedded `DATA` set."""
    missing = sorted(set(missed) if missed is not None else ({variant} - {"oracle"}))
    preamble = f"VARIANT = {variant!r}\nMISSED = frozenset({missing!r})\n"
    if data is not None:
        preamble += f"import json as _json\nDATA = _json.loads({json.dumps(data, sort_keys=True)!r})\n"
    script = textwrap.dedent(code).strip("\n")
    return {"solve.sh": f"#!/bin/bash\nset -e\ncd /app\npython3 - <<'PYEOF'\n{preamble}{script}\nPYEOF\n"}


def all_solutions(code: str, variants: tuple[str, ...], data: Any = None) -> dict[str, dict[str, str]]:
    """The oracle plus every partial variant of one parameterized solver."""
    return {name: python_solve(code, name, data) for name in ("oracle", *variants)}


def apply_edits(source: str, edits: Sequence[tuple[str, str]]) -> str:
    """`source` with every `old` replaced by `new`, in order; an edit that does not apply is a bug."""
    for old, new in edits:
        if old not in source:
            raise ValueError(f"solver edit does not apply: {old!r}")
        source = source.replace(old, new)
    return source


def heredoc_solve(source: str) -> str:
    """A solve.sh that runs the Python program `source` (ending in a newline) in /app."""
    return f"#!/bin/bash\nset -e\ncd /app\npython3 - <<'PY'\n{source}PY\n"


def edited_solutions(
    source: str, edits: Mapping[str, Sequence[tuple[str, str]]], variants: tuple[str, ...]
) -> dict[str, dict[str, str]]:
    """The oracle runs `source`; each partial variant runs it with its `edits` applied."""
    solutions = {"oracle": {"solve.sh": heredoc_solve(source)}}
    for variant in variants:
        solutions[variant] = {"solve.sh": heredoc_solve(apply_edits(source, edits[variant]))}
    return solutions


class SolverProgram(BaseModel):
    """A family's solver, able to miss any subset of its edge cases.

    ``python``: `source` is one program reading ``MISSED``/``VARIANT`` (and ``DATA``);
    ``edited``: `source` is the oracle program and `edits` the textual edits of each variant,
    applied in variant order for a set (a family whose edits do not compose fails loudly).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    style: Literal["python", "edited"]
    source: str
    data: Any = None
    edits: dict[str, list[tuple[str, str]]] = {}
    #: edge-case order in which edits are applied (the family's variants)
    order: tuple[str, ...] = ()

    def solution(self, missed: Iterable[str]) -> dict[str, str]:
        """The solution/ files of a solver missing exactly `missed`."""
        missing = set(missed)
        if self.style == "python":
            name = (
                next(iter(missing))
                if len(missing) == 1
                else ("oracle" if not missing else "+".join(sorted(missing)))
            )
            return python_solve(self.source, name, self.data, missing)
        ordered = [v for v in self.order if v in missing] + sorted(missing - set(self.order))
        source = self.source
        for variant in ordered:
            source = apply_edits(source, self.edits[variant])
        return {"solve.sh": heredoc_solve(source)}

    def solutions(self, variants: tuple[str, ...]) -> dict[str, dict[str, str]]:
        """The oracle plus one partial solution per variant."""
        return {"oracle": self.solution(()), **{v: self.solution({v}) for v in variants}}


def python_program(code: str, data: Any = None) -> SolverProgram:
    """A `SolverProgram` of one Python program parameterized by ``MISSED``."""
    return SolverProgram(style="python", source=code, data=data)


def edited_program(
    source: str, edits: Mapping[str, Sequence[tuple[str, str]]], variants: tuple[str, ...]
) -> SolverProgram:
    """A `SolverProgram` of the oracle program and each variant's edits."""
    return SolverProgram(
        style="edited",
        source=source,
        edits={v: [tuple(e) for e in edits[v]] for v in variants},  # type: ignore[misc]
        order=variants,
    )


def format_rules(lines: list[str]) -> str:
    """A markdown bullet list."""
    return "\n".join(f"- {line}" for line in lines)
