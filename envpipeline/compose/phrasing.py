"""Phrase banks of composed instructions: openings, closings, step markers and verb variants.

Every choice is drawn from the task's own phrasing rng, so a seed still fixes its instruction.
A link's procedural phrase ("find the email ... and note its subject") is varied by swapping its
lead verb and its "note" verb for synonyms; goal-level text drops the phrases that point at a
service ("in online banking, ...", "in the CRM").
"""

from __future__ import annotations

import random
import re

#: word-bounded verbs of procedural phrases and their interchangeable variants
VERB_VARIANTS: dict[str, tuple[str, ...]] = {
    "find": ("find", "locate", "track down", "look for"),
    "look up": ("look up", "check", "pull up", "look into"),
    "search": ("search", "go through", "scan"),
    "check": ("check", "review", "inspect"),
    "open": ("open", "pull up", "bring up"),
    "and note": ("and note", "and write down", "and take note of", "and make a note of", "and get"),
}
_VERB = re.compile(r"\b(" + "|".join(sorted(VERB_VARIANTS, key=len, reverse=True)) + r")\b")

#: phrases that point at a service, and what replaces them (a goal-level request names no service)
SERVICE_HINTS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), r)
    for p, r in (
        (r"^in (?:[^,(]|\([^)]*\))+, ", ""),  # a parenthesis may hold commas
        (r"\bteam chat (?=directory|channel|member)", "chat "),
        (
            r"\s+in (?:the )?(?:crm|hr|maps|online banking|team chat|the shop admin|shop admin|the cloud drive)\b",
            "",
        ),
        (r"\s+to the map\b", ""),
        (r"\bcloud-drive\s+", ""),
        (r"\bshop admin\b", "shop"),
        (r"\bthe [a-z ]+ service's\s+", "the "),
    )
)

OPENINGS: dict[str, tuple[str, ...]] = {
    "explicit": (
        "Start from the {noun} '{value}'.",
        "You are given the {noun} '{value}'.",
        "Begin with the {noun} '{value}'.",
        "Here is the {noun} to start from: '{value}'.",
        "Your starting point is the {noun} '{value}'.",
        "Take the {noun} '{value}' as your starting point.",
        "The task starts from one {noun}: '{value}'.",
        "Work from the {noun} '{value}' and follow these steps.",
    ),
    "goal": (
        "I need a hand with a few things that all go back to the {noun} '{value}'.",
        "Everything here starts from the {noun} '{value}'.",
        "Could you sort something out for me? It concerns the {noun} '{value}'.",
        "All I have to go on is the {noun} '{value}'.",
        "This one starts with the {noun} '{value}'.",
        "Please take care of the following; the only thing I know is the {noun} '{value}'.",
        "Some follow-up work came in about the {noun} '{value}'.",
        "I was handed the {noun} '{value}' and need a few things done around it.",
        "Picking up from the {noun} '{value}', here is what I need.",
        "There is some admin to do, and it hinges on the {noun} '{value}'.",
    ),
}

#: Openings of a chain that starts at a read taking no argument (`instructions.StartSource`):
#: `{read}` is the read's procedural phrase (explicit steps), `{start}` the value it gives (a request).
#: As many as `OPENINGS` of each style, so that a draw picks the same place in either.
SOURCE_OPENINGS: dict[str, tuple[str, ...]] = {
    "explicit": (
        "First, {read}: that {noun} is where you start.",
        "Begin here: {read}. Start from that {noun}.",
        "To start, {read}; everything below starts from that {noun}.",
        "Before the steps, {read}. That {noun} is your starting point.",
        "Start by finding your {noun}: {read}.",
        "Your starting point is a {noun} you have to read first: {read}.",
        "The task starts from one {noun}; to get it, {read}.",
        "First, {read}, then follow these steps from that {noun}.",
    ),
    "goal": (
        "I need a hand with a few things that all go back to {start}.",
        "Everything here starts from {start}.",
        "Could you sort something out for me? It concerns {start}.",
        "All I have to go on is {start}: look it up first.",
        "This one starts with {start}.",
        "Please take care of the following; it all starts from {start}.",
        "Some follow-up work came in about {start}.",
        "I was pointed to {start} and need a few things done around it.",
        "Picking up from {start}, here is what I need.",
        "There is some admin to do, and it hinges on {start}.",
    ),
}

STEP_MARKERS: tuple[str, ...] = ("Step {i}: ", "{i}. ", "{i}) ", "({i}) ", "Step {i} - ", "#{i}: ")

ACTION_JOINS: tuple[str, ...] = (
    " Then, with {source}: {phrase}.",
    " Next, using {source}, {phrase}.",
    " After that, taking {source}: {phrase}.",
    " Also, with {source} in hand, {phrase}.",
    " Once you have it, use {source} to {phrase}.",
    " Then {phrase} (use {source}).",
)

SERVICE_FRAMES: tuple[str, ...] = ("In {title}, {phrase}", "Using {title}, {phrase}", "({title}) {phrase}")

CLOSINGS: dict[str, tuple[str, ...]] = {
    "explicit": (
        "Finally, reply with the {noun} you found in step {n}, and name no other {noun}.",
        "When you are done, answer with the {noun} from step {n} and no other {noun}.",
        "Your final reply should give only the {noun} found in step {n}.",
        "End by replying with the {noun} from step {n}; mention no other {noun}.",
        "To finish, tell me the {noun} you noted in step {n}, and only that {noun}.",
        "Close with a short reply naming the {noun} from step {n} (no other {noun}).",
    ),
    "goal": (
        "When it is all done, tell me {target}, and name no other {noun}.",
        "In your reply, just give me {target}; mention no other {noun}.",
        "Finally, what is {target}? Reply with that {noun} only.",
        "Once that is done, reply with {target} and no other {noun}.",
        "I also need to know {target}: reply with it, naming no other {noun}.",
        "Wrap up by telling me {target} (and no other {noun}).",
    ),
}

GOAL_ACTION_FRAMES: tuple[str, ...] = (
    "{phrase}.",
    "Please {phrase}.",
    "I need you to {phrase}.",
    "Could you {phrase}?",
    "Make sure to {phrase}.",
    "Also {phrase}.",
)

HINT_FRAMES: tuple[str, ...] = (
    "Hint: {phrase}.",
    "Tip: you can {phrase}.",
    "A pointer: {phrase}.",
    "(It helps to {phrase}.)",
)
HINT_INTROS: tuple[str, ...] = (
    "Some pointers for the lookups:",
    "A few hints on where to look:",
    "If it helps:",
    "Where to start:",
)


def vary(phrase: str, rng: random.Random) -> str:
    """A procedural phrase with its verbs swapped for drawn synonyms (same meaning)."""
    return _VERB.sub(lambda m: rng.choice(VERB_VARIANTS[m.group(1)]), phrase)


def action_join(join: str, phrase: str) -> str:
    """`join` fitted to `phrase`: a phrase that opens with where it acts ("in the close crm
    service, create a lead ...") cannot follow "use X to" ("use the title to in the close crm
    service, create ..."); it follows "use X here:" instead."""
    if phrase.startswith("in the ") and join.endswith(" to {phrase}."):
        return join.removesuffix(" to {phrase}.") + " here: {phrase}."
    return join


def without_service_hints(phrase: str) -> str:
    """A phrase with every pointer at a service removed (goal-level text names none)."""
    for pattern, replacement in SERVICE_HINTS:
        phrase = pattern.sub(replacement, phrase)
    return re.sub(r"\s{2,}", " ", phrase).strip()


def capitalize(text: str) -> str:
    """The text with its first letter upper-cased (the rest untouched)."""
    return text[:1].upper() + text[1:]
