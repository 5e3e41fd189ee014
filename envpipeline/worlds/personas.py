"""Personas: a procedural generator from pools and a diversity judge with feedback-driven revisions.

`generate_persona(seed, index)` is a pure function of its arguments (plus the revision number and
the exclusions the judge's feedback asks for). `DiversityJudge` rejects a candidate that repeats an
occupation, a core tool set or a story arc of an accepted persona, or whose description is too close
(Jaccard over token sets) to one; `propose_personas` regenerates a rejected candidate with the
feedback at most `max_revisions` times.
"""

from __future__ import annotations

import random
import re
from typing import Any

from envpipeline.models.world import Contact, JudgeVerdict, Persona
from envpipeline.worlds.persona_pools import (
    ARCS,
    CITIES,
    DOMAINS,
    FIRST,
    LAST,
    OCCUPATIONS,
    RELATIONS,
    SITES,
    STOPWORDS,
    WORDS,
)


def _tokens(text: str) -> set[str]:
    return {t for t in re.findall(r"[a-z0-9]+", text.lower()) if len(t) > 2 and t not in STOPWORDS}


def jaccard(a: str, b: str) -> float:
    """Jaccard similarity of the token sets of two texts."""
    ta, tb = _tokens(a), _tokens(b)
    return len(ta & tb) / len(ta | tb) if ta | tb else 1.0


def generate_persona(
    seed: int, index: int, revision: int = 0, exclude: dict[str, list[str]] | None = None
) -> Persona:
    """Persona `index` of `seed` (revision `revision`, avoiding `exclude`d occupations / tool sets / arcs)."""
    exclude = exclude or {}
    rng = random.Random(f"persona:{seed}:{index}:{revision}")
    first, last = rng.choice(FIRST), rng.choice(LAST)
    occupations = [o for o in OCCUPATIONS if o not in exclude.get("occupation", [])] or list(OCCUPATIONS)
    occupation = rng.choice(occupations)
    banned_tools = set(exclude.get("core_tools", []))
    core_tools = sorted(rng.sample(OCCUPATIONS[occupation], 3))
    for _ in range(20):
        if ",".join(core_tools) not in banned_tools:
            break
        core_tools = sorted(rng.sample(OCCUPATIONS[occupation], 3))
    arcs_pool = [a for a in ARCS if a.name not in exclude.get("arcs", [])] or list(ARCS)
    arcs = rng.sample(arcs_pool, min(2, len(arcs_pool)))
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


class DiversityJudge:
    """Rejects repeats (occupation, core tool set, arc) and near-duplicates (Jaccard > threshold)."""

    def __init__(self, threshold: float = 0.5) -> None:
        self.threshold = threshold

    def review(self, candidate: Persona, accepted: list[Persona]) -> JudgeVerdict:
        """Accept or reject `candidate` against the `accepted` personas, with diagnostic feedback."""
        repeats: dict[str, list[str]] = {}
        notes: list[str] = []
        tools = ",".join(candidate.core_tools)
        arcs = {a.name for a in candidate.arcs}
        taken_arcs = sorted({a.name for p in accepted for a in p.arcs})
        for other in accepted:
            if other.occupation == candidate.occupation:
                repeats.setdefault("occupation", []).append(candidate.occupation)
                notes.append(f"occupation '{candidate.occupation}' repeats {other.persona_id}, pick another")
            if ",".join(other.core_tools) == tools:
                repeats.setdefault("core_tools", []).append(tools)
                notes.append(f"core tools [{tools}] repeat {other.persona_id}, vary the tool set")
            for arc in sorted(arcs & {a.name for a in other.arcs}):
                # the feedback names every arc already taken so the revision can avoid all of them
                repeats.setdefault("arcs", []).extend([arc, *taken_arcs])
                notes.append(
                    f"story arc '{arc}' repeats {other.persona_id}, choose an arc outside {taken_arcs}"
                )
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
) -> tuple[list[Persona], list[dict[str, Any]]]:
    """Generate candidates until `n` are accepted; each may be revised `max_revisions` times.

    Returns (accepted personas, one record per rejected attempt: index, revision, persona_id,
    feedback, similarity, gave_up — True on the last allowed attempt).
    """
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
    return accepted, rejected
