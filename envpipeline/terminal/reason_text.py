"""Reasons are short, printable text: what a verdict says, never a dump of what a sandbox printed.

Reasons are stored in the lake (``seed_verification.reasons``) and printed by the CLI, and some
quote what a bundle's own code produced (a build log tail, a reward file's start). `sanitised`
keeps them readable and bounded: control characters (ANSI colours, carriage returns, NULs)
become ``?``, and a reason longer than `MAX_REASON_CHARS` keeps its head (what failed) and a
short tail (the last lines of a log) with the cut said in between.
"""

from __future__ import annotations

import re

#: The longest reason kept (a build error's 40-line log tail fits).
MAX_REASON_CHARS = 2000
#: Characters kept from the start of a longer reason (the sentence saying what failed).
HEAD_CHARS = 400
#: Characters kept from its end (the last lines of the log it quotes).
TAIL_CHARS = 1200

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def sanitised(reason: str) -> str:
    """`reason` with control characters replaced and its length capped (see the module docstring)."""
    text = _CONTROL.sub("?", _ANSI.sub("", reason))
    if len(text) <= MAX_REASON_CHARS:
        return text
    cut = len(text) - HEAD_CHARS - TAIL_CHARS
    return f"{text[:HEAD_CHARS]} [... {cut} characters cut ...] {text[-TAIL_CHARS:]}"
