"""LLM personas: generate with the paper's prompt, judge with the diversity judge(s), revise with feedback.

`propose_personas_llm` mirrors `envpipeline.worlds.personas.propose_personas`: a candidate is
accepted only when the rule-based `DiversityJudge` accepts it (the same gate the procedural path
passes: no repeated occupation, core tool set or arc, no near-duplicate description) and, when
`llm_judge` is on, the LLM diversity judge accepts it too. A rejected candidate is regenerated with
the judges' feedback at most `max_revisions` times (the paper: "up to two revision attempts").
Names, ids, e-mail addresses, handles and passwords are derived from the model's answer
deterministically, so a persona is always well formed for the world builder.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from envpipeline.llm.protocol import LLM
from envpipeline.models.world import Contact, JudgeVerdict, Persona, StoryArc
from envpipeline.worlds.llm.prompts import diversity_messages, persona_messages, schema_text
from envpipeline.worlds.llm.structured import StructuredResult, ask_structured
from envpipeline.worlds.persona_pools import DOMAINS, WORDS
from envpipeline.worlds.personas import DiversityJudge
from envpipeline.worlds.schema import ALL_APPS
from envpipeline.worlds.skills.base import Skill
from envpipeline.worlds.skills.registry import all_skills

_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


class _Draft(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ContactDraft(_Draft):
    """A contact as the model writes it (handle and e-mail are derived)."""

    name: Annotated[str, Field(min_length=3, description="first and last name")]
    relation: Annotated[str, Field(min_length=3, description="friend, family, colleague, client ...")]


class ArcDraft(_Draft):
    """A story arc: a slug, a sentence and the skills that advance it, in order."""

    name: Annotated[str, Field(description="slug, e.g. conference-trip")]
    description: Annotated[str, Field(min_length=8)]
    skills: Annotated[list[str], Field(min_length=2, max_length=6)]


class PersonaDraft(_Draft):
    """The persona bible the model answers with."""

    name: Annotated[str, Field(min_length=3, description="first and last name")]
    occupation: Annotated[str, Field(min_length=3)]
    city: Annotated[str, Field(min_length=2)]
    age: Annotated[int, Field(ge=18, le=90)]
    description: Annotated[str, Field(min_length=60, description="a paragraph about this person")]
    contacts: Annotated[list[ContactDraft], Field(min_length=3, max_length=8)]
    favourite_sites: Annotated[list[str], Field(min_length=2, max_length=6)]
    core_tools: Annotated[list[str], Field(min_length=3, max_length=3, description="three app names")]
    arcs: Annotated[list[ArcDraft], Field(min_length=2, max_length=2)]


class DiversityAnswer(_Draft):
    """The LLM diversity judge's verdict."""

    accepted: bool
    repeats: Annotated[
        dict[str, list[str]], Field(description="occupation / core_tools / arcs -> the repeated values")
    ] = {}
    feedback: Annotated[str, Field(description="what to change ('' when accepted)")] = ""


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()


def _name_parts(name: str) -> list[str]:
    return [p for p in re.split(r"[^a-z]+", _ascii(name)) if p]


def draft_problems(draft: PersonaDraft, skills: dict[str, Skill]) -> list[str]:
    """What makes a validated draft unusable for the world builder (unknown apps or skills ...)."""
    problems = []
    if len(_name_parts(draft.name)) < 2:
        problems.append(f"name: {draft.name!r} needs a first and a last name in Latin letters")
    bad_tools = [t for t in draft.core_tools if t not in ALL_APPS]
    if bad_tools:
        problems.append(f"core_tools: {bad_tools} are not apps; choose from {list(ALL_APPS)}")
    if len(set(draft.core_tools)) != len(draft.core_tools):
        problems.append("core_tools: repeat an app")
    for i, arc in enumerate(draft.arcs):
        if not _SLUG.match(arc.name):
            problems.append(f"arcs.{i}.name: {arc.name!r} is not a lowercase slug")
        unknown = [s for s in arc.skills if s not in skills]
        if unknown:
            problems.append(f"arcs.{i}.skills: unknown skills {unknown}; use the library's names")
    if len({a.name for a in draft.arcs}) != len(draft.arcs):
        problems.append("arcs: two arcs share a name")
    for i, c in enumerate(draft.contacts):
        if len(_name_parts(c.name)) < 2:
            problems.append(f"contacts.{i}.name: {c.name!r} needs a first and a last name")
    if len({tuple(_name_parts(c.name)) for c in draft.contacts}) != len(draft.contacts):
        problems.append("contacts: two contacts share a name")
    return problems


def to_persona(draft: PersonaDraft, seed: int, index: int, revision: int) -> Persona:
    """The `Persona` a valid draft describes (ids, addresses and password derived deterministically)."""
    parts = _name_parts(draft.name)
    first, last = parts[0], parts[-1]
    digest = int(
        hashlib.sha256(f"llm-persona:{seed}:{index}:{revision}:{draft.name}".encode()).hexdigest(), 16
    )
    contacts = []
    for n, c in enumerate(draft.contacts):
        cp = _name_parts(c.name)
        contacts.append(
            Contact(
                name=c.name.strip(),
                handle=f"{cp[0]}.{cp[-1][0]}",
                email=f"{cp[0]}.{cp[-1]}@{DOMAINS[(digest >> n) % len(DOMAINS)]}",
                relation=c.relation.strip().lower(),
            )
        )
    description = (
        f"{draft.description.strip()} Relies on {', '.join(sorted(draft.core_tools))}. "
        f"This month: {'; '.join(a.description for a in draft.arcs)}."
    )
    return Persona(
        persona_id=f"p{index + 1:02d}-{first}-{last}",
        name=f"{first.title()} {last.title()}",
        username=f"{first}.{last}",
        email=f"{first}.{last}@example.com",
        password=f"{WORDS[digest % len(WORDS)]}-{1000 + digest % 9000}",
        occupation=draft.occupation.strip().lower(),
        city=draft.city.strip(),
        description=description,
        contacts=contacts,
        favourite_sites=sorted(draft.favourite_sites),
        core_tools=sorted(draft.core_tools),
        arcs=[StoryArc(name=a.name, description=a.description, skills=list(a.skills)) for a in draft.arcs],
        seed=seed,
        index=index,
        revision=revision,
    )


def persona_card(persona: Persona) -> dict[str, Any]:
    """What the prompts show of an accepted persona."""
    return {
        "persona_id": persona.persona_id,
        "occupation": persona.occupation,
        "core_tools": persona.core_tools,
        "arcs": [a.name for a in persona.arcs],
        "description": persona.description,
    }


def llm_diversity_review(
    llm: LLM, candidate: Persona, accepted: list[Persona], max_repairs: int = 1
) -> tuple[JudgeVerdict, StructuredResult[DiversityAnswer]]:
    """The LLM diversity judge's verdict (a verdict that stays unparseable rejects the candidate)."""
    messages = diversity_messages(
        schema_text(DiversityAnswer), persona_card(candidate), [persona_card(p) for p in accepted]
    )
    result = ask_structured(llm, messages, DiversityAnswer, stage="diversity_judge", max_repairs=max_repairs)
    if result.value is None:
        verdict = JudgeVerdict(
            accepted=False,
            feedback=f"the LLM diversity judge gave no valid verdict: {'; '.join(result.errors)}",
            similarity=0.0,
        )
        return verdict, result
    answer = result.value
    feedback = answer.feedback.strip() or ("" if answer.accepted else "the LLM judge found a repeat")
    verdict = JudgeVerdict(
        accepted=answer.accepted,
        feedback="" if answer.accepted else feedback,
        similarity=0.0,
        repeats={k: sorted(set(v)) for k, v in answer.repeats.items() if v},
    )
    return verdict, result


def propose_personas_llm(
    llm: LLM,
    n: int,
    seed: int = 0,
    *,
    max_revisions: int = 2,
    max_repairs: int = 2,
    judge: DiversityJudge | None = None,
    llm_judge: bool = True,
    skills: dict[str, Skill] | None = None,
    max_candidates: int | None = None,
) -> tuple[list[Persona], list[dict[str, Any]], list[dict[str, Any]]]:
    """Generate personas with `llm` until `n` are accepted (or `max_candidates` are spent).

    Returns (accepted personas, one record per rejected attempt — index, revision, persona_id,
    feedback, similarity, gave_up, by —, one record per LLM request group — stage, ok, attempts,
    repairs, tokens, errors).

    Raises:
        LLMError: the endpoint failed after the client's retries.
    """
    judge = judge or DiversityJudge()
    library = skills if skills is not None else all_skills()
    summaries = {name: skill.summary for name, skill in library.items()}
    accepted: list[Persona] = []
    rejected: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    limit = max_candidates if max_candidates is not None else 3 * n + 3
    for index in range(limit):
        if len(accepted) >= n:
            break
        feedback = ""
        for revision in range(max_revisions + 1):
            messages = persona_messages(
                schema_text(PersonaDraft),
                index,
                [persona_card(p) for p in accepted],
                list(ALL_APPS),
                summaries,
                feedback,
            )
            result = ask_structured(
                llm,
                messages,
                PersonaDraft,
                stage="persona",
                check=lambda d: draft_problems(d, library),
                max_repairs=max_repairs,
            )
            calls.append(result.summary())
            gave_up = revision == max_revisions
            if result.value is None:
                rejected.append(
                    {
                        "index": index,
                        "revision": revision,
                        "persona_id": None,
                        "feedback": f"no valid persona after repairs: {'; '.join(result.errors)}",
                        "similarity": 0.0,
                        "gave_up": True,
                        "by": "validation",
                    }
                )
                break
            candidate = to_persona(result.value, seed, index, revision)
            verdicts = [("rules", judge.review(candidate, accepted))]
            if llm_judge and verdicts[0][1].accepted:
                verdict, judged = llm_diversity_review(llm, candidate, accepted)
                calls.append(judged.summary())
                verdicts.append(("llm", verdict))
            refusals = [(by, v) for by, v in verdicts if not v.accepted]
            if not refusals and candidate.persona_id not in {p.persona_id for p in accepted}:
                accepted.append(candidate)
                break
            feedback = (
                "; ".join(v.feedback for _, v in refusals) or f"persona id {candidate.persona_id} is taken"
            )
            rejected.append(
                {
                    "index": index,
                    "revision": revision,
                    "persona_id": candidate.persona_id,
                    "feedback": feedback,
                    "similarity": verdicts[0][1].similarity,
                    "gave_up": gave_up,
                    "by": ",".join(by for by, _ in refusals) or "id",
                }
            )
    return accepted, rejected, calls
