"""Reasons stored in the lake are printable and bounded, whatever a bundle's code printed."""

from __future__ import annotations

from envpipeline.terminal.reason_text import HEAD_CHARS, MAX_REASON_CHARS, TAIL_CHARS, sanitised
from envpipeline.terminal.verify import VerificationResult


def test_control_characters_and_colours_do_not_reach_a_reason() -> None:
    assert (
        sanitised("build failed:\x1b[31m red\x1b[0m\r\x00 done\n next") == "build failed: red?? done\n next"
    )


def test_a_long_reason_keeps_its_head_and_tail_and_says_what_was_cut() -> None:
    reason = "docker build failed:" + "x" * 50_000 + "the last log line"
    kept = sanitised(reason)
    assert len(kept) < MAX_REASON_CHARS
    assert kept.startswith("docker build failed:") and kept.endswith("the last log line")
    assert f"[... {len(reason) - HEAD_CHARS - TAIL_CHARS} characters cut ...]" in kept


def test_every_verification_reason_is_sanitised_on_the_way_in() -> None:
    result = VerificationResult(
        bundle="b",
        path="/b",
        backend="local",
        verdict="oracle_failed",
        reasons=["\x1b[1m" + "y" * 10_000],
        fingerprint="",
    )
    assert len(result.reasons[0]) < MAX_REASON_CHARS and "\x1b" not in result.reasons[0]
