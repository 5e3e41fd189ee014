"""Shared helpers for family modules: verifier scripts with embedded expectations, Python solve.sh.

Not a family (it registers nothing). Verifier scripts are plain stdlib Python: a `run()` body calls
`check(name, condition)`; any exception or failed check exits non-zero and names what failed.
Solutions are one Python program parameterized by `VARIANT`, so the oracle and each partial
variant share code and differ only where the variant misses its edge case.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

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


def python_solve(code: str, variant: str, data: Any = None) -> dict[str, str]:
    """A solve.sh that runs `code` in /app with `VARIANT` (and optional embedded `DATA`) set."""
    preamble = f"VARIANT = {variant!r}\n"
    if data is not None:
        preamble += f"import json as _json\nDATA = _json.loads({json.dumps(data, sort_keys=True)!r})\n"
    script = textwrap.dedent(code).strip("\n")
    return {"solve.sh": f"#!/bin/bash\nset -e\ncd /app\npython3 - <<'PYEOF'\n{preamble}{script}\nPYEOF\n"}


def all_solutions(code: str, variants: tuple[str, ...], data: Any = None) -> dict[str, dict[str, str]]:
    """The oracle plus every partial variant of one parameterized solver."""
    return {name: python_solve(code, name, data) for name in ("oracle", *variants)}


def format_rules(lines: list[str]) -> str:
    """A markdown bullet list."""
    return "\n".join(f"- {line}" for line in lines)
