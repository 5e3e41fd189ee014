"""Skill nodes of a seed that declares none: inferred from its instruction and tests.

An imported Harbor/Terminal-Bench bundle without tags still needs required skills for the
selector's coverage. Each node of the terminal families' vocabulary is recognised by words that
name it (whole words, case-insensitive) in ``instruction.md`` and the files under ``tests/``.
"""

from __future__ import annotations

import re
from pathlib import Path

#: skill node -> words (regular expressions) whose presence shows the task exercises it
SKILL_CUES: dict[str, tuple[str, ...]] = {
    "aggregation": (
        r"aggregat\w*",
        r"group(?:ed)? by",
        r"sum(?:s|med)?",
        r"average",
        r"totals?",
        r"count(?:s|ing)?",
    ),
    "archives": (r"archives?", r"tar(?:ball)?", r"zip", r"gzip", r"\.tar\.gz", r"extract(?:ed|ing)?"),
    "bash": (r"(?:bash|shell) scripts?", r"chmod", r"symlinks?", r"executable"),  # not "#!/bin/bash"
    "config-formats": (r"ya?ml", r"toml", r"\.ini", r"config(?:uration)? files?"),
    "csv": (r"csv", r"comma[- ]separated", r"tsv"),
    "file-io": (
        r"director(?:y|ies)",
        r"folders?",
        r"renam\w*",
        r"(?:move|copy|write) (?:the |each |every )?files?",
    ),
    "git": (r"git", r"commits?", r"branch(?:es)?", r"repository"),
    "json": (r"json", r"jsonl"),
    "monitoring": (r"monitor\w*", r"health ?checks?", r"uptime", r"latency"),
    "regex": (r"regex\w*", r"regular expressions?", r"patterns?"),
    "scheduling": (r"cron\w*", r"schedul\w*", r"crontab"),
    "sqlite": (r"sqlite3?", r"sql", r"select .* from", r"database"),
    "text-parsing": (r"pars(?:e|es|ing)", r"log lines?", r"text files?"),
    "validation": (r"validat\w*", r"invalid", r"malformed"),
}
_PATTERNS = {
    skill: re.compile(r"\b(?:" + "|".join(cues) + r")\b", re.IGNORECASE) for skill, cues in SKILL_CUES.items()
}
#: at most this many bytes of each test file are read (tests can ship data)
MAX_TEST_BYTES = 200_000


def infer_skills(text: str) -> list[str]:
    """The skill nodes whose cues occur in `text`, sorted."""
    return sorted(skill for skill, pattern in _PATTERNS.items() if pattern.search(text))


def bundle_text(bundle_dir: Path, instruction: str) -> str:
    """The instruction and the readable text of the bundle's tests."""
    parts = [instruction]
    tests = bundle_dir / "tests"
    for path in sorted(tests.rglob("*")) if tests.is_dir() else []:
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as handle:
                parts.append(handle.read(MAX_TEST_BYTES).decode("utf-8", errors="ignore"))
    return "\n".join(parts)
