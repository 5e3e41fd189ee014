"""Entity masking for diversity figures: replace the values that vary per world by their types.

Two tasks that differ only in who, what product, which date and how much are the same task to a
learner. `mask_entities(text)` replaces, in this order: e-mail addresses (``<EMAIL>``), web
addresses and ``*.example`` sites (``<SITE>``), ISO dates and timestamps (``<DATE>``), clock times
(``<TIME>``), product names of the catalogues (``<PRODUCT>``), person names, handles and
usernames (``<NAME>``), cities (``<PLACE>``), ids such as SKUs, order numbers and confirmation
codes (``<ID>``), money amounts (``<AMOUNT>``) and remaining numbers (``<NUMBER>``).

Names, products and places come from an `EntityLexicon`: `default_lexicon()` holds every value the
procedural generators can draw (persona pools and every catalogue product); `with_extra` adds
values from elsewhere (an LLM-written persona, a world's own products). The pattern-based classes
(e-mails, dates, ids, numbers) need no lexicon.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
SITE = re.compile(r"\b(?:https?://\S+|[\w-]+(?:\.[\w-]+)*\.example\b)")
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b")
TIME = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b")
#: SKU-HDMI-2M, ORD-10042, REF-2452, AB12CD: an upper-case token holding a digit or a dash-joined code
ID = re.compile(r"\b(?:[A-Z][A-Z0-9]*-[A-Z0-9][A-Z0-9-]*|(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{5,})\b")
AMOUNT = re.compile(r"(?:[$€£]\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s?(?:USD|EUR|DKK|cents)\b)")
NUMBER = re.compile(r"\b\d+(?:[.,]\d+)*\b")


@dataclass(frozen=True)
class EntityLexicon:
    """Known values of the lexicon-based entity types (compared case-insensitively)."""

    names: frozenset[str] = frozenset()
    products: frozenset[str] = frozenset()
    places: frozenset[str] = frozenset()

    def with_extra(
        self,
        names: Iterable[str] = (),
        products: Iterable[str] = (),
        places: Iterable[str] = (),
    ) -> EntityLexicon:
        """This lexicon plus more names, products and places (blank values are ignored)."""
        return EntityLexicon(
            names=self.names | {n for n in names if n.strip()},
            products=self.products | {p for p in products if p.strip()},
            places=self.places | {p for p in places if p.strip()},
        )


_WORD = re.compile(r"\w+")


class _LexiconMatcher:
    """Longest-match replacement of known values: an index by first word, then a direct compare
    (a regex alternation of thousands of values is far slower)."""

    def __init__(self, lexicon: EntityLexicon) -> None:
        index: dict[str, list[tuple[str, str]]] = {}
        # on equal length a product wins over a name, a name over a place
        for label, values in (
            ("<PRODUCT>", lexicon.products),
            ("<NAME>", lexicon.names),
            ("<PLACE>", lexicon.places),
        ):
            for value in values:
                first = _WORD.search(value.lower())
                if first:
                    index.setdefault(first.group(), []).append((value.lower(), label))
        for entries in index.values():
            entries.sort(key=lambda e: -len(e[0]))
        self.index = index

    def sub(self, text: str) -> str:
        lower = text.lower()
        out: list[str] = []
        pos = 0
        for word in _WORD.finditer(lower):
            start = word.start()
            if start < pos or (start > 0 and (lower[start - 1].isalnum() or lower[start - 1] in "_-")):
                continue
            for value, label in self.index.get(word.group(), ()):
                end = start + len(value)
                after = lower[end : end + 1]
                if lower.startswith(value, start) and not (after.isalnum() or after in ("_", "-")):
                    out += [text[pos:start], label]
                    pos = end
                    break
        return "".join(out) + text[pos:]


_PATTERNS_BEFORE: list[tuple[re.Pattern[str], str]] = [
    (EMAIL, "<EMAIL>"),
    (SITE, "<SITE>"),
    (DATE, "<DATE>"),
    (TIME, "<TIME>"),
]
_PATTERNS_AFTER: list[tuple[re.Pattern[str], str]] = [
    (ID, "<ID>"),
    (AMOUNT, "<AMOUNT>"),
    (NUMBER, "<NUMBER>"),
]


@lru_cache(maxsize=32)
def _matcher(lexicon: EntityLexicon) -> _LexiconMatcher:
    return _LexiconMatcher(lexicon)


def mask_entities(text: str, lexicon: EntityLexicon | None = None) -> str:
    """`text` with names, e-mails, sites, products, places, ids, dates, times and numbers replaced
    by their types (``<NAME>``, ``<EMAIL>``, ...); `lexicon` defaults to `default_lexicon()`."""
    for pattern, label in _PATTERNS_BEFORE:
        text = pattern.sub(label, text)
    text = _matcher(lexicon if lexicon is not None else default_lexicon()).sub(text)
    for pattern, label in _PATTERNS_AFTER:
        text = pattern.sub(label, text)
    return text


def mask_all(texts: Iterable[str], lexicon: EntityLexicon | None = None) -> list[str]:
    """`mask_entities` of every text."""
    lexicon = lexicon if lexicon is not None else default_lexicon()
    return [mask_entities(t, lexicon) for t in texts]


def name_forms(first: str, last: str) -> set[str]:
    """The ways a generated person shows up in text: full name, first name, username and handle."""
    first, last = first.lower(), last.lower()
    return {f"{first} {last}", first, last, f"{first}.{last}", f"{first}.{last[0]}"}


@lru_cache(maxsize=1)
def default_lexicon() -> EntityLexicon:
    """Every name, product and city the procedural persona and catalogue generators can draw."""
    from envpipeline.worlds import persona_pools as pools
    from envpipeline.worlds.catalogues import all_product_names

    names: set[str] = set()
    for first in pools.FIRST:
        for last in pools.LAST:
            names |= name_forms(first, last)
    places = frozenset(pools.CITIES) | frozenset(pools.ARC_FILLERS["place"])
    return EntityLexicon(names=frozenset(names), products=frozenset(all_product_names()), places=places)
