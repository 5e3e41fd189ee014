"""Personas: a combinatorial generator from pools and a diversity judge with feedback-driven revisions.

Occupations are ``<mode> <speciality> <trade>`` (`persona_pools.TRADES`, `MODES`) and story arcs
are variants of the base arcs (`ARCS` x `ARC_SHAPES`: a filler such as a city or a client, plus one
extra step), so the pools hold well over a thousand occupations and story arcs. For a seed, both are
laid out as a stream that visits every trade (every base arc) once per round in a seeded order;
persona `index` takes occupation `index` and arcs `2*index`, `2*index+1` of the streams, so
distinct personas differ by construction and trades and arcs stay balanced.

`generate_persona(seed, index)` is a pure function of its arguments (plus the revision number and
the exclusions the judge's feedback asks for). `DiversityJudge` rejects a candidate that repeats an
occupation or a story arc of an accepted persona, or the core tool set of one of the same trade
(until the trade has used all its sets), whose trade or base arc is already used more than its fair
share (`fair_share`: no repeat until every option has been used once), or
whose description is too close (Jaccard over token sets) to one; `propose_personas` regenerates a
rejected candidate with the feedback at most `max_revisions` times, and raises `PersonaShortfall`
(never a silent cap) when `n` personas cannot be accepted.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from functools import lru_cache
from itertools import combinations, product
from typing import Any

from envpipeline.errors import ConfigError
from envpipeline.models.world import Contact, JudgeVerdict, Persona, StoryArc
from envpipeline.worlds.persona_pools import (
    ARC_FILLERS,
    ARC_SHAPES,
    ARCS,
    CITIES,
    DOMAINS,
    FIRST,
    LAST,
    MODES,
    RELATIONS,
    SITES,
    STOPWORDS,
    TRADES,
    WORDS,
)

ARCS_PER_PERSONA = 2
CORE_TOOLS = 3


class PersonaShortfall(ConfigError):
    """Fewer personas were accepted than asked for; carries what was accepted and rejected."""

    def __init__(self, message: str, accepted: list[Persona], rejected: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.accepted = accepted
        self.rejected = rejected


@lru_cache(maxsize=4096)
def _tokens(text: str) -> frozenset[str]:
    return frozenset(t for t in re.findall(r"[a-z0-9]+", text.lower()) if len(t) > 2 and t not in STOPWORDS)


def jaccard(a: str, b: str) -> float:
    """Jaccard similarity of the token sets of two texts."""
    ta, tb = _tokens(a), _tokens(b)
    return len(ta & tb) / len(ta | tb) if ta | tb else 1.0


def _slug(text: str) -> str:
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))


def occupation_name(mode: str, speciality: str, trade: str) -> str:
    """'freelance wedding photographer', 'paediatric nurse' (an empty mode is left out)."""
    return " ".join(part for part in (mode, speciality, trade) if part)


def trade_of(occupation: str) -> str | None:
    """The trade an occupation belongs to (None for one outside the pools, e.g. LLM-written)."""
    for trade in sorted(TRADES, key=len, reverse=True):
        if occupation == trade or occupation.endswith(" " + trade):
            return trade
    return None


def arc_base(arc_name: str) -> str | None:
    """The base arc of a generated arc variant (None for an arc outside the pools)."""
    for base in sorted(ARC_SHAPES, key=len, reverse=True):
        if arc_name == base or arc_name.startswith(base + "-"):
            return base
    return None


def _rounds(groups: dict[str, list[Any]], rng: random.Random) -> list[Any]:
    """Interleave the groups: every round visits each non-exhausted group once, in a seeded order."""
    out: list[Any] = []
    for r in range(max(len(g) for g in groups.values())):
        order = sorted(groups)
        rng.shuffle(order)
        out += [groups[k][r] for k in order if r < len(groups[k])]
    return out


@lru_cache(maxsize=8)
def occupation_stream(seed: int) -> tuple[tuple[str, str, list[str]], ...]:
    """Every (occupation, trade, core tools) of the pools, balanced over trades, in the seed's
    order; the k-th occupation of a trade gets the trade's k-th core tool set (seeded order), so
    personas of one trade share a tool set only once the trade has used all of them."""
    rng = random.Random(f"occupations:{seed}")
    groups: dict[str, list[tuple[str, str, list[str]]]] = {}
    for trade, spec in TRADES.items():
        options = [occupation_name(m, s, trade) for m, s in product(MODES, spec.specialities)]
        rng.shuffle(options)
        sets = [sorted(c) for c in combinations(spec.apps, CORE_TOOLS)]
        rng.shuffle(sets)
        groups[trade] = [(o, trade, sets[k % len(sets)]) for k, o in enumerate(options)]
    return tuple(_rounds(groups, rng))


def _arc(base: StoryArc, filler: str, extra: str, rng: random.Random) -> StoryArc:
    pool, text, _ = ARC_SHAPES[base.name]
    skills = list(base.skills)
    skills.insert(rng.randint(1, len(skills)), extra)
    return StoryArc(
        name=f"{base.name}-{_slug(filler)}-{extra.replace('_', '-')}",
        description=text.format(filler),
        skills=skills,
    )


@lru_cache(maxsize=8)
def arc_stream(seed: int) -> tuple[StoryArc, ...]:
    """Every arc variant of the pools, balanced over base arcs, in the seed's order."""
    rng = random.Random(f"arcs:{seed}")
    groups: dict[str, list[StoryArc]] = {}
    for base in ARCS:
        pool, _, extras = ARC_SHAPES[base.name]
        variants = [_arc(base, f, e, rng) for f, e in product(ARC_FILLERS[pool], extras)]
        rng.shuffle(variants)
        groups[base.name] = variants
    return tuple(_rounds(groups, rng))


def persona_capacity() -> dict[str, int]:
    """How many distinct occupations and arcs the pools hold, and so how many personas they allow."""
    occupations = len(occupation_stream(0))
    arcs = len(arc_stream(0))
    return {
        "occupations": occupations,
        "arcs": arcs,
        "personas": min(occupations, arcs // ARCS_PER_PERSONA),
    }


def _pick_occupation(
    seed: int, index: int, revision: int, exclude: dict[str, list[str]]
) -> tuple[str, str, list[str]]:
    """Revision 0 takes stream entry `index`; a revision walks the stream back from its end (the
    entries no earlier index takes) to the first one the exclusions allow."""
    stream = occupation_stream(seed)
    if revision == 0:
        return stream[index % len(stream)]
    banned, banned_trades = set(exclude.get("occupation", [])), set(exclude.get("trade", []))
    banned_tools = set(exclude.get("core_tools", []))
    start = len(stream) - 1 - (index * 3 + revision) % len(stream)
    rules = (
        lambda o: o[0] not in banned and o[1] not in banned_trades and ",".join(o[2]) not in banned_tools,
        lambda o: o[0] not in banned and o[1] not in banned_trades,
        lambda o: o[0] not in banned,
    )
    for allowed in rules:
        for offset in range(len(stream)):
            entry = stream[(start - offset) % len(stream)]
            if allowed(entry):
                return entry
    return stream[start]


def _pick_arcs(seed: int, index: int, revision: int, exclude: dict[str, list[str]]) -> list[StoryArc]:
    stream = arc_stream(seed)
    banned, banned_bases = set(exclude.get("arcs", [])), set(exclude.get("arc_base", []))
    # revision 0 takes the next two arcs of the stream, a revision walks back from its end
    forward = revision == 0
    start = ARCS_PER_PERSONA * index if forward else len(stream) - 1 - (index * 5 + revision * 2)
    picked: list[StoryArc] = []
    for strict in (True, False):
        for offset in range(len(stream)):
            arc = stream[(start + offset if forward else start - offset) % len(stream)]
            bases = {arc_base(a.name) for a in picked}
            if arc.name in banned or arc_base(arc.name) in bases or arc in picked:
                continue
            if strict and arc_base(arc.name) in banned_bases:
                continue
            picked.append(arc)
            if len(picked) == ARCS_PER_PERSONA:
                return picked
    return picked


def generate_persona(
    seed: int, index: int, revision: int = 0, exclude: dict[str, list[str]] | None = None
) -> Persona:
    """Persona `index` of `seed` (revision `revision`, avoiding `exclude`d occupations, trades,
    core tool sets, arcs and base arcs)."""
    exclude = exclude or {}
    rng = random.Random(f"persona:{seed}:{index}:{revision}")
    first, last = rng.choice(FIRST), rng.choice(LAST)
    occupation, _, core_tools = _pick_occupation(seed, index, revision, exclude)
    arcs = _pick_arcs(seed, index, revision, exclude)
    city = rng.choice(CITIES)
    sites = sorted(rng.sample(SITES, 3))
    others = rng.sample([f for f in FIRST if f != first], len(RELATIONS))
    contacts = []
    for name, relation in zip(others, RELATIONS):
        surname = rng.choice(LAST)
        contacts.append(
            Contact(
                name=f"{name.title()} {surname.title()}",
                handle=f"{name}.{surname[0]}",
                email=f"{name}.{surname}@{rng.choice(DOMAINS)}",
                relation=relation,
            )
        )
    full = f"{first.title()} {last.title()}"
    description = (
        f"{full} is a {rng.randint(24, 61)}-year-old {occupation} who lives in {city}. "
        f"Relies on {', '.join(core_tools)}. Often visits {', '.join(sites)}. "
        f"This month: {'; '.join(a.description for a in arcs)}. "
        f"Close contacts: {', '.join(c.name + ' (' + c.relation + ')' for c in contacts)}."
    )
    return Persona(
        persona_id=f"p{index + 1:02d}-{first}-{last}",
        name=full,
        username=f"{first}.{last}",
        email=f"{first}.{last}@example.com",
        password=f"{rng.choice(WORDS)}-{rng.randint(1000, 9999)}",
        occupation=occupation,
        city=city,
        description=description,
        contacts=contacts,
        favourite_sites=sites,
        core_tools=core_tools,
        arcs=arcs,
        seed=seed,
        index=index,
        revision=revision,
    )


def fair_share(accepted: int, options: int, per_persona: int = 1) -> int:
    """How many accepted personas may share one option (trade, tool set, base arc) once the next
    is accepted: 1 until every option has been used, then the even spread, rounded up."""
    return max(1, math.ceil((accepted + 1) * per_persona / max(options, 1)))


class DiversityJudge:
    """Rejects repeats (occupation, arc), over-used trades / core tool sets / base arcs and
    near-duplicates (Jaccard > threshold)."""

    def __init__(self, threshold: float = 0.5) -> None:
        self.threshold = threshold

    def review(self, candidate: Persona, accepted: list[Persona]) -> JudgeVerdict:
        """Accept or reject `candidate` against the `accepted` personas, with diagnostic feedback."""
        repeats: dict[str, list[str]] = {}
        notes: list[str] = []
        n = len(accepted)
        for other in accepted:
            if other.occupation == candidate.occupation:
                repeats.setdefault("occupation", []).append(candidate.occupation)
                notes.append(f"occupation '{candidate.occupation}' repeats {other.persona_id}, pick another")
        trades = Counter(trade_of(p.occupation) for p in accepted)
        trade = trade_of(candidate.occupation)
        trade_cap = fair_share(n, len(TRADES))
        if trade is not None and trades[trade] >= trade_cap:
            repeats["trade"] = [t for t, c in trades.items() if t is not None and c >= trade_cap]
            notes.append(f"trade '{trade}' already has {trades[trade]} personas, pick a less used trade")
        tools = ",".join(candidate.core_tools)
        # the same tool set within a trade is a repeat until the trade has used all its sets
        # (across trades a set recurs: 32 trades share 9 apps)
        peer_sets = {",".join(p.core_tools) for p in accepted if trade and trade_of(p.occupation) == trade}
        trade_sets = (
            {",".join(sorted(c)) for c in combinations(TRADES[trade].apps, CORE_TOOLS)} if trade else set()
        )
        if tools in peer_sets and not trade_sets <= peer_sets:
            repeats["core_tools"] = sorted(peer_sets)
            holder = next(p.persona_id for p in accepted if ",".join(p.core_tools) == tools)
            notes.append(f"core tools [{tools}] repeat {holder} of the same trade, vary the tool set")
        taken = {a.name: p.persona_id for p in accepted for a in p.arcs}
        for arc in candidate.arcs:
            if arc.name in taken:
                # the exclusions name every arc already taken so the revision can avoid all of them
                repeats.setdefault("arcs", []).extend(taken)
                notes.append(
                    f"story arc '{arc.name}' repeats {taken[arc.name]}, choose one of the "
                    f"arcs no accepted persona has ({len(taken)} taken)"
                )
        bases = Counter(arc_base(a.name) for p in accepted for a in p.arcs)
        base_cap = fair_share(n, len(ARC_SHAPES), ARCS_PER_PERSONA)
        for arc in candidate.arcs:
            base = arc_base(arc.name)
            if base is not None and bases[base] >= base_cap:
                repeats["arc_base"] = [b for b, c in bases.items() if b is not None and c >= base_cap]
                notes.append(f"story arc '{base}' already told {bases[base]} times, pick a less used one")
        similarity, nearest = 0.0, None
        for other in accepted:
            score = jaccard(candidate.description, other.description)
            if score > similarity:
                similarity, nearest = score, other.persona_id
        if similarity > self.threshold:
            notes.append(
                f"description too similar to {nearest} (Jaccard {similarity:.2f} > "
                f"{self.threshold:.2f}), change occupation, city and arcs"
            )
            repeats.setdefault("occupation", []).append(
                next(p.occupation for p in accepted if p.persona_id == nearest)
            )
        repeats = {k: sorted(set(v)) for k, v in repeats.items()}
        return JudgeVerdict(
            accepted=not notes,
            feedback="; ".join(notes),
            similarity=round(similarity, 4),
            nearest=nearest,
            repeats=repeats,
        )


def propose_personas(
    n: int,
    seed: int,
    max_revisions: int = 2,
    judge: DiversityJudge | None = None,
    max_candidates: int | None = None,
    allow_shortfall: bool = False,
) -> tuple[list[Persona], list[dict[str, Any]]]:
    """Generate candidates until `n` are accepted; each may be revised `max_revisions` times.

    Returns (accepted personas, one record per rejected attempt: index, revision, persona_id,
    feedback, similarity, gave_up — True on the last allowed attempt). Asking for more personas
    than the pools hold (`persona_capacity`) is a `ConfigError`; accepting fewer than `n` within
    `max_candidates` (default 5n + 10) raises `PersonaShortfall` unless `allow_shortfall`.
    """
    capacity = persona_capacity()
    if n > capacity["personas"]:
        raise ConfigError(
            f"{n} personas asked for, but the persona pools hold at most {capacity['personas']} "
            f"distinct ones ({capacity['occupations']} occupations, {capacity['arcs']} story arcs at "
            f"{ARCS_PER_PERSONA} per persona); ask for fewer or extend envpipeline/worlds/persona_pools.py"
        )
    judge = judge or DiversityJudge()
    accepted: list[Persona] = []
    rejected: list[dict[str, Any]] = []
    limit = max_candidates if max_candidates is not None else 5 * n + 10
    index = 0
    while len(accepted) < n and index < limit:
        exclude: dict[str, list[str]] = {}
        candidate = generate_persona(seed, index)
        for revision in range(max_revisions + 1):
            verdict = judge.review(candidate, accepted)
            if verdict.accepted:
                accepted.append(candidate)
                break
            rejected.append(
                {
                    "index": index,
                    "revision": revision,
                    "persona_id": candidate.persona_id,
                    "feedback": verdict.feedback,
                    "similarity": verdict.similarity,
                    "gave_up": revision == max_revisions,
                }
            )
            if revision == max_revisions:
                break
            for key, values in verdict.repeats.items():
                exclude[key] = sorted(set(exclude.get(key, [])) | set(values))
            candidate = generate_persona(seed, index, revision=revision + 1, exclude=exclude)
        index += 1
    if len(accepted) < n and not allow_shortfall:
        raise PersonaShortfall(
            f"only {len(accepted)} of {n} personas passed the diversity judge after {index} "
            f"candidates ({len(rejected)} rejected attempts; last feedback: "
            f"{rejected[-1]['feedback'] if rejected else 'none'})",
            accepted,
            rejected,
        )
    return accepted, rejected
