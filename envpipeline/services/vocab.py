"""Shared value pools for deterministic state generation (names, cities, dates, codes, titles)."""

from __future__ import annotations

import random

FIRST_NAMES = (
    "Maya",
    "Jonas",
    "Tomas",
    "Sofia",
    "Priya",
    "Alex",
    "Dara",
    "Liam",
    "Noor",
    "Kenji",
    "Amara",
    "Elena",
    "Omar",
    "Ingrid",
    "Mateo",
    "Yuki",
    "Zara",
    "Felix",
    "Leila",
    "Arjun",
    "Chloe",
    "Diego",
    "Hana",
    "Ivan",
    "Jade",
    "Kofi",
    "Lucia",
    "Malik",
    "Nina",
    "Oscar",
    "Petra",
    "Quinn",
    "Rosa",
    "Samir",
    "Tara",
    "Umar",
    "Vera",
    "Wen",
    "Ximena",
    "Yara",
)
LAST_NAMES = (
    "Chen",
    "Weber",
    "Rivera",
    "Marchetti",
    "Raman",
    "Kim",
    "Okafor",
    "Novak",
    "Haddad",
    "Tanaka",
    "Silva",
    "Larsen",
    "Dubois",
    "Kowalski",
    "Moreau",
    "Nakamura",
    "Petrov",
    "Rossi",
    "Schmidt",
    "Yilmaz",
    "Andersen",
    "Batista",
    "Costa",
    "Dimitrov",
    "Eriksen",
    "Fischer",
    "Garcia",
    "Horvat",
    "Iversen",
    "Jensen",
    "Khan",
    "Lindqvist",
    "Mensah",
    "Nguyen",
    "Ortiz",
    "Park",
    "Quispe",
    "Reyes",
    "Sato",
    "Torres",
)
#: (city, country, latitude, longitude)
CITIES = (
    ("Ulaanbaatar", "Mongolia", 47.92, 106.92),
    ("Lisbon", "Portugal", 38.72, -9.14),
    ("Nairobi", "Kenya", -1.29, 36.82),
    ("Reykjavik", "Iceland", 64.15, -21.94),
    ("Montreal", "Canada", 45.50, -73.57),
    ("Osaka", "Japan", 34.69, 135.50),
    ("Lima", "Peru", -12.05, -77.04),
    ("Tallinn", "Estonia", 59.44, 24.75),
    ("Accra", "Ghana", 5.60, -0.19),
    ("Hanoi", "Vietnam", 21.03, 105.85),
    ("Krakow", "Poland", 50.06, 19.94),
    ("Porto Alegre", "Brazil", -30.03, -51.23),
    ("Tbilisi", "Georgia", 41.72, 44.79),
    ("Auckland", "New Zealand", -36.85, 174.76),
    ("Bergen", "Norway", 60.39, 5.32),
    ("Marrakesh", "Morocco", 31.63, -7.99),
    ("Valparaiso", "Chile", -33.05, -71.62),
    ("Da Nang", "Vietnam", 16.05, 108.20),
    ("Ghent", "Belgium", 51.05, 3.72),
    ("Cebu", "Philippines", 10.32, 123.89),
    ("Almaty", "Kazakhstan", 43.24, 76.89),
    ("Cork", "Ireland", 51.90, -8.47),
    ("Izmir", "Turkey", 38.42, 27.14),
    ("Hobart", "Australia", -42.88, 147.33),
)
TOPICS = (
    "Quarterly Offsite",
    "Frostbyte Meetup",
    "Vendor Review",
    "Launch Retrospective",
    "Budget Planning",
    "Hiring Sync",
    "Security Audit",
    "Customer Onboarding",
    "Design Critique",
    "Data Migration",
    "Roadmap Review",
    "Community Call",
    "Release Train",
    "Partner Summit",
    "Incident Postmortem",
    "Sprint Demo",
    "Board Prep",
    "Field Trip",
    "Volunteer Drive",
    "Hackathon Kickoff",
    "Pricing Workshop",
    "Support Escalation",
    "Warehouse Audit",
    "Travel Briefing",
    "Team Lunch",
    "Brand Refresh",
    "Compliance Training",
    "Office Move",
)
WORDS = (
    "amber",
    "birch",
    "cobalt",
    "delta",
    "ember",
    "fjord",
    "garnet",
    "harbor",
    "indigo",
    "juniper",
    "kestrel",
    "lumen",
    "maple",
    "nimbus",
    "onyx",
    "pebble",
    "quartz",
    "raven",
    "saffron",
    "tundra",
)
DOMAINS = ("example.com", "acme.test", "northwind.test", "contoso.test", "globex.test")
WEATHER = ("sunny", "cloudy", "rain", "snow", "windy", "fog", "thunderstorm")
_CAPITALIZED_WORDS = tuple(w.capitalize() for w in WORDS)
_LOWER_TOPICS = tuple(t.lower() for t in TOPICS)
#: every "MM-DD" of a date (days 1-28 of each month), so a date costs one draw
MONTH_DAYS = tuple(f"{m:02d}-{d:02d}" for m in range(1, 13) for d in range(1, 29))


class FastRandom(random.Random):
    """A `random.Random` whose integer draws scale one `random()` float (no rejection sampling).

    Deterministic from its seed like its base class, several times cheaper per draw, with the same
    (uniform, up to float granularity) distributions; the composer and the environments it
    rebuilds generate states with it (`seeded`). Any `random.Random` still works everywhere.
    """

    def _randbelow(self, n: int) -> int:  # type: ignore[override]
        return int(self.random() * n)

    def choice(self, seq):  # type: ignore[no-untyped-def,override]
        if not seq:
            raise IndexError("Cannot choose from an empty sequence")
        return seq[int(self.random() * len(seq))]

    def randint(self, a: int, b: int) -> int:
        if b < a:
            raise ValueError(f"empty range in randint({a}, {b})")
        return a + int(self.random() * (b - a + 1))

    def shuffle(self, x: list) -> None:  # type: ignore[override]
        draw = self.random
        for i in reversed(range(1, len(x))):
            j = int(draw() * (i + 1))
            x[i], x[j] = x[j], x[i]


def seeded(seed: int | str) -> FastRandom:
    """The generator of composed candidates and their service states, from a stable seed."""
    return FastRandom(seed)


def person_name(rng: random.Random) -> str:
    """A random full name."""
    return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"


def email_for(name: str, rng: random.Random) -> str:
    """A plausible email address for `name`."""
    first, last = name.lower().split(" ", 1)
    return f"{first}.{last.replace(' ', '')}@{rng.choice(DOMAINS)}"


def city(rng: random.Random) -> tuple[str, str, float, float]:
    """A random (city, country, lat, lon)."""
    return rng.choice(CITIES)


def date(rng: random.Random, year: int = 2026) -> str:
    """A random ISO date in `year`."""
    return f"{year}-{rng.choice(MONTH_DAYS)}"


def code(rng: random.Random, prefix: str) -> str:
    """A random reference code such as ``INV-4821``."""
    return f"{prefix}-{rng.randint(1000, 9999)}"


def title(rng: random.Random) -> str:
    """A random topic title with a distinguishing word, e.g. ``Vendor Review Cobalt``."""
    return f"{rng.choice(TOPICS)} {rng.choice(_CAPITALIZED_WORDS)}"


def sentence(rng: random.Random) -> str:
    """A filler sentence for bodies and descriptions."""
    return f"Notes on the {rng.choice(_LOWER_TOPICS)} ({rng.choice(WORDS)})."


def unique(rng: random.Random, make: object, taken: set[str], *args: object) -> str:
    """Draw values from `make(rng, *args)` until one is not in `taken`; record and return it."""
    for _ in range(1000):
        value = make(rng, *args)  # type: ignore[operator]
        if value not in taken:
            taken.add(value)
            return value
    raise ValueError("value pool exhausted")


def sample_value(value_type: str, rng: random.Random) -> str:
    """A random value of one of the composer's value types."""
    if value_type == "person":
        return person_name(rng)
    if value_type == "email":
        return email_for(person_name(rng), rng)
    if value_type == "city":
        return city(rng)[0]
    if value_type == "date":
        return date(rng)
    if value_type == "code":
        return code(rng, "REF")
    if value_type == "title":
        return title(rng)
    raise ValueError(f"unknown value type '{value_type}'")
