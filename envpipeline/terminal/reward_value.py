"""The one reading of a reward number: a plain decimal number in [0, 1], else `MalformedReward`.

A verifier's ``reward.txt``, the reward in its ``reward.json`` and the reward of a recorded rollout
all go through `reward_from_text`, so the same text gets the same answer everywhere. Plain decimal
means ASCII digits with an optional sign and one optional point (``1``, ``0.5``, ``.25``,
``1.0``): Python's ``float`` would also take ``1_0`` (as 10), ``nan``, ``inf``, ``1e400`` (as
infinity) and ``١`` (an Arabic-Indic one), and ``int`` raises on a 5,000-digit integer; none of
those is a reward. The value is compared as a `Decimal`, so a long string of digits is judged
exactly and never overflows.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal

#: Digits, an optional sign and one optional decimal point (ASCII only: `re.ASCII`).
PLAIN_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)", re.ASCII)
#: Longest reward text read (``0.`` followed by 62 digits is more precision than a float holds).
MAX_REWARD_CHARS = 64
#: Largest reward.json parsed (a reward plus a few sidecar metrics fits in far less).
MAX_REWARD_JSON_BYTES = 64 * 1024
#: Characters of a rejected text quoted back in a reason.
QUOTED_CHARS = 24


class MalformedReward(ValueError):
    """A reward that is not one plain decimal number in [0, 1] (the message says why)."""


class NumberText(str):
    """A JSON number kept as its source text (so ``1e400`` is never turned into infinity)."""


def quoted(text: str) -> str:
    """A short, printable quotation of untrusted text for a reason."""
    shown = "".join(c if c.isprintable() else "?" for c in text[:QUOTED_CHARS])
    return repr(shown) + ("..." if len(text) > QUOTED_CHARS else "")


def plain_decimal(text: str, where: str) -> Decimal:
    """`text` (surrounding whitespace ignored) as an exact decimal, or MalformedReward."""
    token = text.strip()
    if not token:
        raise MalformedReward(f"{where} is empty")
    if len(token) > MAX_REWARD_CHARS:
        raise MalformedReward(
            f"{where} holds {len(token)} characters, not one plain decimal number "
            f"(at most {MAX_REWARD_CHARS})"
        )
    if not PLAIN_DECIMAL.fullmatch(token):
        raise MalformedReward(f"{where} is not a plain decimal number: {quoted(token)}")
    return Decimal(token)


def sidecar_metric(text: str, where: str) -> float:
    """A reward.json sidecar metric (``"duration": 1.2e-05``): any finite JSON number, in any range
    (only the reward itself must be a plain decimal in [0, 1]); MalformedReward otherwise."""
    if len(text) > MAX_REWARD_CHARS:
        raise MalformedReward(f"{where} holds {len(text)} characters, more than {MAX_REWARD_CHARS}")
    value = float(text)
    if not math.isfinite(value):
        raise MalformedReward(f"{where} is not a finite number: {quoted(text)}")
    return value


def reward_from_text(text: str, where: str) -> float:
    """The reward `text` holds, as a float in [0, 1]; MalformedReward (naming `where`) otherwise."""
    value = plain_decimal(text, where)
    if not Decimal(0) <= value <= Decimal(1):
        raise MalformedReward(f"the reward in {where} is {text.strip()}, outside [0, 1]")
    return float(value)


def _reject_constant(name: str) -> object:
    raise MalformedReward(f"{name} is not a number")


def load_json_numbers_as_text(raw: bytes | str, where: str) -> object:
    """Parse JSON with every number kept as `NumberText`; MalformedReward when it is not JSON
    (NaN/Infinity, too large or too deeply nested included)."""
    if len(raw) > MAX_REWARD_JSON_BYTES:
        raise MalformedReward(f"{where} is {len(raw)} bytes, more than {MAX_REWARD_JSON_BYTES}")
    try:
        return json.loads(raw, parse_int=NumberText, parse_float=NumberText, parse_constant=_reject_constant)
    except MalformedReward as e:
        raise MalformedReward(f"{where} is not valid JSON: {e}") from e
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        raise MalformedReward(f"{where} is not valid JSON") from None


def reward_from_json_value(value: object, where: str) -> float:
    """A reward given as a JSON value: a number, or a string holding one (a rollout table's
    ``"reward": "1"``); booleans and everything else are MalformedReward."""
    if isinstance(value, str):
        return reward_from_text(value, where)
    if isinstance(value, bool):
        raise MalformedReward(f"{where} is a boolean ({str(value).lower()}), not a number")
    if isinstance(value, int):  # never str(value): a 5,000-digit int cannot be printed
        if value not in (0, 1):
            raise MalformedReward(f"the reward in {where} is an integer outside [0, 1]")
        return float(value)
    if isinstance(value, float):  # "f" format: 1e-05 reads as 0.000010, nan/inf stay words
        return reward_from_text(format(value, "f"), where)
    raise MalformedReward(f"{where} is not a number: {quoted(json.dumps(value, default=str))}")
