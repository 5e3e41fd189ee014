"""Whether a text states a value: verbatim, or in another spelling a reader takes for the same value.

The leak checks (composed tasks' `chain_hidden`, LLM world tasks' `leaked_answers`) ask whether an
instruction gives away a value the agent must find. A case-insensitive substring match is what a
template needs, since a template quotes values as it stores them, but a model that rewrites or
writes an instruction paraphrases: it writes 'REF 9251' for ``REF-9251``, 'June 15' for
``2026-06-15``, '4:15 pm' for ``16:15``, '$1,250' for ``1250.00``, 'the Team-Lunch Nimbus' for
``Team Lunch Nimbus``. Each of those gives the value away as surely as the verbatim one.

`states_value` matches, besides the verbatim value:

- **the same letters and digits** between word boundaries, whatever separates the words (case,
  spaces, hyphens, dots, an apostrophe's ``'s`` after it): a separator between two digits counts
  (``16:15`` is not ``16.15``, the amount), except a thousands comma (``1,250.00``);
- **a date** (``YYYY-MM-DD``) as a month name with its day, with or without the year ('June 15',
  '15th of Jun.') or as numbers ('15/06/2026', '2026/06/15', '15.06.2026'; without the year only
  with a two-digit day, '6/15', since '3/4' is more often a fraction): any date `dates_in` reads
  as it;
- **a time of day** (``HH:MM``) on a 12-hour clock ('4:15 pm', '4.15pm', '4 pm' for ``16:00``) or
  as '16h15';
- **an amount** with cents (``1250.00``) as its whole units after a currency sign or before a
  currency word ('$1,250', '1250 dollars') when the cents are zero.

A value shorter than three letters or digits is never looked for (too many false alarms).

`dates_in` and `code_key` also serve the other direction, a final reply checked by
`envpipeline.rubric.answer_is`: every date a text names in any of those spellings, and the one key
of a code however it is separated ('REF 9251', 'ref-9251', 'REF9251'). `addresses_in` reads the
addresses a recipients field lists, for the ``addresses`` condition (a mail to exactly these
people). Standard library only: the Harbor runtime vendors this module with `envpipeline.rubric`,
and world criterion scripts paste it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

_RUN = re.compile(r"[^\W_]+")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_TIME = re.compile(r"(\d{1,2}):(\d{2})")
_AMOUNT = re.compile(r"(\d+)\.(\d{2})")
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_CURRENCY_SIGNS = r"[$€£]"
_CURRENCY_WORDS = r"(?:dollars?|euros?|pounds?|usd|eur|gbp)"
MIN_CHARACTERS = 3


def states_value(text: str, value: str) -> bool:
    """Whether `text` states `value` verbatim or in a spelling listed in the module docstring."""
    value = value.strip()
    if sum(len(run) for run in _RUN.findall(value)) < MIN_CHARACTERS:
        return False
    if value.lower() in text.lower() or _same_characters(text, value):
        return True
    if _DATE.fullmatch(value):
        return any(same_date(reading, value) for readings in _date_readings(text) for reading in readings)
    return any(re.search(pattern, text, re.IGNORECASE) for pattern in _other_spellings(value))


def stated_values(text: str, values: Iterable[str]) -> list[str]:
    """The `values` that `text` states (`states_value`), in their order, each once."""
    return [value for value in dict.fromkeys(values) if value and states_value(text, value)]


@lru_cache(maxsize=512)
def _folded(text: str) -> tuple[str, frozenset[int], frozenset[int]]:
    """`text` lowercased with the separators dropped, except one between two digits (thousands
    commas dropped too), and where its words start and end in the folded string.

    Cached: the leak checks fold one instruction once for every value they look for."""
    text = _THOUSANDS.sub("", text.lower())
    folded: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    position = 0
    previous_end = None
    for run in _RUN.finditer(text):
        word = run.group()
        if previous_end is not None and folded and folded[-1][-1].isdigit() and word[0].isdigit():
            gap = text[previous_end : run.start()].strip() or " "
            folded.append(gap[0])
            position += 1
        starts.append(position)
        folded.append(word)
        position += len(word)
        ends.append(position)
        previous_end = run.end()
    return "".join(folded), frozenset(starts), frozenset(ends)


def _same_characters(text: str, value: str) -> bool:
    """The value's letters and digits, word-bounded, in `text` (`_folded` on both)."""
    needle = _folded(value)[0]
    haystack, starts, ends = _folded(text)
    at = haystack.find(needle)
    while at >= 0:
        if at in starts and at + len(needle) in ends:
            return True
        at = haystack.find(needle, at + 1)
    return False


def _other_spellings(value: str) -> list[str]:
    """Regular expressions of the other spellings of a time of day or an amount."""
    if match := _TIME.fullmatch(value):
        return _time_spellings(int(match.group(1)), int(match.group(2)))
    if match := _AMOUNT.fullmatch(value):
        return _amount_spellings(int(match.group(1)), match.group(2))
    return []


def _time_spellings(hour: int, minute: int) -> list[str]:
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        return []
    twelve = hour % 12 or 12
    meridiem = r"\s*(?:p\.?\s?m\b\.?)" if hour >= 12 else r"\s*(?:a\.?\s?m\b\.?)"
    spellings = [
        rf"(?<![\d:.])0?{twelve}[:.]{minute:02d}{meridiem}",
        rf"(?<![\d:.]){hour:02d}h{minute:02d}\b",
        rf"(?<![\d:.]){hour}h{minute:02d}\b",
    ]
    if minute == 0:
        spellings.append(rf"(?<![\d:.])0?{twelve}{meridiem}")
    return spellings


def _amount_spellings(units: int, cents: str) -> list[str]:
    if cents != "00":
        return []
    grouped = f"{units:,}".replace(",", ",?")
    number = rf"(?<![\d.,]){grouped}(?![\d]|[.,]\d)"
    return [rf"{_CURRENCY_SIGNS}\s?{number}", rf"{number}\s*{_CURRENCY_WORDS}\b"]


_MONTH_WORD = (
    r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY_WORD = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR_AFTER = r"(?:,?\s+(?P<year>\d{4}))?"
_DATE_FORMS = (
    re.compile(r"(?<![\d-])(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})(?![\d-])"),
    re.compile(r"(?<![\d/.])(?P<year>\d{4})[/.](?P<month>\d{1,2})[/.](?P<day>\d{1,2})(?![\d/.]\d)"),
    re.compile(rf"\b{_MONTH_WORD}\s+(?:the\s+)?{_DAY_WORD}\b{_YEAR_AFTER}", re.IGNORECASE),
    re.compile(rf"\b{_DAY_WORD}\s+(?:of\s+)?{_MONTH_WORD}\b{_YEAR_AFTER}", re.IGNORECASE),
    # day and month in either order, with a four-digit year: both readings
    re.compile(r"(?<![\d/.])(?P<first>\d{1,2})[/.](?P<second>\d{1,2})[/.](?P<year>\d{4})(?![\d/.]\d)"),
    # without a year, only with a two-digit day ('6/15'): '3/4' is more often a fraction
    re.compile(r"(?<![\d/.])(?P<first>\d{1,2})/(?P<second>\d{1,2})(?![\d/]|\.\d)"),
)
#: the year of a date named without one
ANY_YEAR = "????"


def dates_in(text: str) -> list[set[str]]:
    """Every date `text` names, each as the set of its readings (``YYYY-MM-DD``; ``????-MM-DD``
    when it names no year; '03/04/2026' has two), in the spellings of the module docstring."""
    return [set(readings) for readings in _date_readings(text)]


@lru_cache(maxsize=512)
def _date_readings(text: str) -> tuple[frozenset[str], ...]:
    """`dates_in`, cached (one instruction is read once for all the dates looked for in it)."""
    spans: list[tuple[int, int, frozenset[str]]] = []
    for form in _DATE_FORMS:
        for match in form.finditer(text):
            if any(start < match.end() and match.start() < end for start, end, _ in spans):
                continue
            readings = _readings(match.groupdict())
            if readings:
                spans.append((match.start(), match.end(), frozenset(readings)))
    return tuple(readings for _, _, readings in sorted(spans, key=lambda span: span[0]))


def same_date(reading: str, iso: str) -> bool:
    """Whether one reading (`dates_in`) is the date `iso`, a reading without a year matching any."""
    return reading == iso or (reading.startswith(ANY_YEAR) and reading[4:] == iso[4:])


def _readings(groups: dict[str, str | None]) -> set[str]:
    year = groups.get("year") or ANY_YEAR
    if groups.get("first"):
        first, second = int(groups["first"] or 0), int(groups["second"] or 0)
        pairs = {(first, second), (second, first)}
        if year == ANY_YEAR:
            pairs = {(m, d) for m, d in pairs if d >= 10}
    else:
        month = groups["month"] or ""
        number = int(month) if month.isdigit() else _month_number(month)
        pairs = {(number, int(groups["day"] or 0))}
    return {f"{year}-{m:02d}-{d:02d}" for m, d in pairs if 1 <= m <= 12 and 1 <= d <= 31}


def _month_number(word: str) -> int:
    prefix = word.lower().rstrip(".")[:3]
    return next((i + 1 for i, name in enumerate(MONTHS) if name.startswith(prefix)), 0)


def code_key(code: str) -> str:
    """A code's letters and digits, lower case: 'REF-9251', 'REF 9251' and 'ref9251' are one key."""
    return "".join(_RUN.findall(code.lower()))


_ADDRESS_SEPARATORS = re.compile(r"[,;]")


def addresses_in(value: object) -> frozenset[str]:
    """The e-mail addresses a recipients field lists ('a@x.test, B@y.test;c@z.test', or a list),
    in lower case: what an ``addresses`` condition compares, as a set (order and case aside)."""
    if isinstance(value, list | tuple):
        items = [str(item) for item in value]
    else:
        items = _ADDRESS_SEPARATORS.split("" if value is None else str(value))
    return frozenset(item.strip().lower() for item in items if item.strip())
