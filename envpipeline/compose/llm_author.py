"""LLM instruction authoring with a probe: a model rewrites a composed task's instruction, an agent checks it.

CompoWorld's task authoring "designs an instruction and initial state, probes a solution to define
a reachable goal" (seed ``000_c36d859f2860882d.txt``, §4.2, pp. 5-6). The procedural author
writes the instruction from templates; this module lets a model rewrite it in a requested style
(``explicit`` steps, ``hinted``, or a ``goal``-level request) and accepts the rewrite only when:

a. every literal the procedural instruction states (quoted values, ``#channels``: the planted
   start value and the values the criteria check that no tool reveals) is still stated verbatim,
   and the final reply's kind (``city``, ``title``...) is still asked for;
b. no value the agent must discover (``metadata["hidden_values"]``) leaks into it; a ``goal`` or
   ``hinted`` rewrite carries no numbered steps;
c. a probe, the ``llm`` agent policy (`envpipeline.policies.llm_agent`), earns reward 1 on the task
   with the new instruction in one of `probe_tries` episodes.

(a) and (b) are checked on each reply, and a failing reply is repaired with the reasons (bounded);
(c) runs once on the reply that passed them. Otherwise the procedural instruction stays and
``metadata["authoring"]`` records why. An accepted rewrite is a new task: its id hashes the
procedural task id with the new instruction, and ``metadata["authoring"]["procedural_task_id"]``
keeps the replay check pointed at the seed's procedural draft.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, model_validator

from envpipeline.canonical import canonical_hash
from envpipeline.compose import gates
from envpipeline.errors import ConfigError, LLMError
from envpipeline.llm.protocol import LLM
from envpipeline.llm.structured import ReplyRejected, ask_structured, json_object, pydantic_reasons
from envpipeline.models.base import Strict
from envpipeline.models.task import GateResult, TaskRecord
from envpipeline.policies.base import ComposedTarget, Policy

InstructionStyle = Literal["explicit", "hinted", "goal"]
STYLES: dict[str, str] = {
    "explicit": "numbered steps, one per link of the chain, saying which service to use for each",
    "hinted": "the goal in a few sentences, with hints about which services hold the information; "
    "no numbered steps",
    "goal": "a goal-level request as a colleague would write it: the outcome wanted, naming neither "
    "the services nor the chain of lookups; no numbered steps",
}

AUTHOR_PROMPT = """\
You rewrite the instructions of tasks for AI agents that act through the tools of several
services. The rewrite asks for exactly the same work: the same changes and the same final reply.

Rules:
- Keep every value listed under "keep verbatim" exactly as written (same characters, same quotes
  are not required but the text must be identical).
- Never mention a value listed under "never mention": the agent must find those itself.
- Ask for the final reply exactly as the original does (same kind of value, nothing else).
- Answer with one JSON object: {"instruction": "<the rewritten instruction>"}."""

_QUOTED = re.compile(r"(?<!\w)'([^']+)'(?!\w)|(?<!\w)\"([^\"]+)\"(?!\w)")
_CHANNEL = re.compile(r"#[A-Za-z0-9][\w-]*")
_NUMBERED_STEP = re.compile(r"(?im)^\s*(?:step\s*\d+\b|\d+[.)]\s)")


class AuthorConfig(Strict):
    """How composed tasks' instructions are authored: the procedural templates or an LLM with a probe."""

    kind: Annotated[Literal["procedural", "llm"], Field(description="procedural or llm")] = "procedural"
    style: Annotated[
        InstructionStyle | None, Field(description="rewrite style; None = the record's instruction_style")
    ] = None
    model: Annotated[str | None, Field(description="llm: litellm model for the author and the probe")] = None
    api_base: Annotated[str | None, Field(description="llm: OpenAI-compatible endpoint")] = None
    api_key_env: Annotated[str | None, Field(description="llm: environment variable with the key")] = None
    max_repairs: Annotated[int, Field(ge=0, description="repair turns after a rejected rewrite")] = 2
    probe_tries: Annotated[int, Field(ge=1, description="k: probe episodes; one reward of 1 accepts")] = 2
    probe_max_steps: Annotated[int, Field(ge=1, description="tool calls per probe episode")] = 80
    cache_dir: Annotated[Path | None, Field(description="disk cache of author and probe replies")] = None

    @model_validator(mode="after")
    def _model_for_llm(self) -> AuthorConfig:
        if self.kind == "llm" and not self.model:
            raise ValueError("the llm author needs a model (e.g. openai/gpt-4o-mini)")
        return self


class RewriteReply(Strict):
    """The model's reply: the rewritten instruction."""

    instruction: Annotated[str, Field(min_length=20, max_length=4000, description="the new instruction")]


def stated_literals(record: TaskRecord) -> list[str]:
    """Literals the procedural instruction states that the agent cannot discover (must stay stated).

    The record's ``metadata["stated_values"]`` when its author lists them, else every quoted value
    and ``#channel`` of the instruction, less the hidden values.
    """
    listed = record.metadata.get("stated_values")
    if isinstance(listed, list):
        return [str(v) for v in listed]
    hidden = {str(v).lower() for v in record.metadata.get("hidden_values", [])}
    found = [a or b for a, b in _QUOTED.findall(record.instruction)] + _CHANNEL.findall(record.instruction)
    return [v for v in dict.fromkeys(found) if v.lower() not in hidden]


def final_kind(record: TaskRecord) -> str | None:
    """The kind of value the final reply gives (``city``), from the final-answer criterion."""
    return next((c.value_kind for c in record.criteria if c.kind == "final_answer" and c.value_kind), None)


def rewrite_failures(record: TaskRecord, instruction: str, style: InstructionStyle) -> list[str]:
    """Why a rewrite cannot replace the instruction (checks a and b of the module docstring).

    Leaks and style come first: the repair turn quotes the first reasons.
    """
    leak = gates.chain_hidden(instruction, [str(v) for v in record.metadata.get("hidden_values", [])])
    failures = [
        f"the value '{v}' must be discovered by the agent; do not mention it" for v in leak.evidence["leaked"]
    ]
    if style != "explicit" and _NUMBERED_STEP.search(instruction):
        failures.append(f"a {style} instruction has no numbered steps")
    kind = final_kind(record)
    if kind and kind.lower() not in instruction.lower():
        failures.append(f"the final reply must still ask for the {kind}")
    failures += [
        f"the value '{v}' is no longer stated verbatim"
        for v in stated_literals(record)
        if v not in instruction
    ]
    return failures


def author_messages(record: TaskRecord, style: InstructionStyle) -> list[dict[str, Any]]:
    """The rewrite request: the original, the style, what to keep and what never to mention."""
    keep = "\n".join(f"- {v}" for v in stated_literals(record)) or "- (none)"
    hidden = "\n".join(f"- {v}" for v in record.metadata.get("hidden_values", [])) or "- (none)"
    user = (
        f"Original instruction:\n{record.instruction}\n\nStyle: {style}: {STYLES[style]}.\n\n"
        f"Keep verbatim:\n{keep}\n\nNever mention:\n{hidden}\n\n"
        f"The final reply gives the {final_kind(record) or 'answer'} and nothing else."
    )
    return [{"role": "system", "content": AUTHOR_PROMPT}, {"role": "user", "content": user}]


def rewritten(
    record: TaskRecord, instruction: str, authoring: dict[str, Any], probe: GateResult
) -> TaskRecord:
    """The task with the accepted instruction: a new id, the chain-hidden gate rerun, the probe's gate."""
    task_id = f"cw-{canonical_hash({'procedural': record.task_id, 'instruction': instruction})[:16]}"
    hidden = [str(v) for v in record.metadata.get("hidden_values", [])]
    gate_list = [g for g in record.gates if g.name != "chain_hidden"]
    gate_list += [gates.chain_hidden(instruction, hidden), probe]
    metadata = {**record.metadata, "authoring": {**authoring, "procedural_task_id": record.task_id}}
    return record.model_copy(
        update={"task_id": task_id, "instruction": instruction, "metadata": metadata, "gates": gate_list}
    )


class LLMAuthor:
    """Rewrites accepted composed tasks' instructions; keeps the procedural one when a check fails."""

    def __init__(self, llm: LLM, probe: Policy, config: AuthorConfig) -> None:
        """Args:
        llm: the author model (`LLMClient` or `ScriptedLLM`).
        probe: the agent that must earn the reward with the new instruction (the ``llm`` policy).
        config: style, repairs and probe tries.
        """
        if "composed" not in probe.families:
            raise ConfigError(f"the probe policy {probe.name} cannot attempt composed tasks")
        self.llm = llm
        self.probe = probe
        self.config = config

    def author(self, record: TaskRecord) -> TaskRecord:
        """The record with the rewrite when every check passes, else unchanged but for the reasons."""
        if record.status != "accepted":
            return record
        style = self.config.style or record.metadata.get("instruction_style") or "goal"
        if style not in STYLES:
            raise ConfigError(f"unknown instruction style '{style}'; known: {', '.join(STYLES)}")

        def validate(text: str | None) -> str:
            try:
                reply = RewriteReply.model_validate(json_object(text))
            except ValidationError as e:
                raise ReplyRejected(pydantic_reasons(e)) from e
            if failures := rewrite_failures(record, reply.instruction, style):
                raise ReplyRejected(failures)
            return reply.instruction

        try:
            outcome = ask_structured(
                self.llm, author_messages(record, style), validate, max_repairs=self.config.max_repairs
            )
        except LLMError as e:  # the endpoint failed: this task keeps its procedural instruction
            authoring = {"author": "llm", "style": style, "accepted": False, "reasons": [f"llm: {e}"]}
            return _annotated(record, authoring)
        authoring: dict[str, Any] = {
            "author": "llm",
            "style": style,
            "accepted": False,
            "attempts": len(outcome.attempts),
            "tokens": outcome.total_tokens,
            "procedural_instruction": record.instruction,
        }
        if outcome.value is None:
            authoring["reasons"] = [f"rewrite: {r}" for r in outcome.failures]
            return _annotated(record, authoring)
        candidate = rewritten(record, outcome.value, authoring, GateResult(name="author_probe", passed=True))
        rewards, tokens = [], 0
        for index in range(self.config.probe_tries):
            rollout = self.probe.rollout(ComposedTarget(candidate), index)
            rewards.append(rollout.reward)
            tokens += rollout.prompt_tokens + rollout.completion_tokens
            if rollout.reward >= 1.0:
                break
        authoring |= {"probe_rewards": rewards, "probe_tokens": tokens, "probe": self.probe.name}
        if max(rewards) < 1.0:
            authoring["reasons"] = [
                f"probe: {self.probe.name} earned {rewards} in {len(rewards)} tries, never 1"
            ]
            authoring["rejected_instruction"] = outcome.value
            return _annotated(record, authoring)
        probe_gate = GateResult(
            name="author_probe",
            passed=True,
            reason=f"{self.probe.name} earned reward 1 with the rewrite",
            evidence={"rewards": rewards},
        )
        return rewritten(record, outcome.value, {**authoring, "accepted": True}, probe_gate)


def _annotated(record: TaskRecord, authoring: dict[str, Any]) -> TaskRecord:
    return record.model_copy(update={"metadata": {**record.metadata, "authoring": authoring}})


def build_author(config: AuthorConfig) -> LLMAuthor | None:
    """The configured author: None for the procedural default, else an `LLMAuthor` over litellm."""
    if config.kind == "procedural":
        return None
    from envpipeline.llm.client import LLMClient, LLMConfig
    from envpipeline.policies.registry import PolicyConfig, build_policy

    assert config.model is not None  # the config's validator
    cache = config.cache_dir
    client = LLMClient(
        LLMConfig(
            model=config.model,
            api_base=config.api_base,
            api_key_env=config.api_key_env,
            cache_dir=None if cache is None else cache / "author",
        )
    )
    probe = build_policy(
        PolicyConfig(
            kind="llm",
            name=f"probe:{config.model}",
            model=config.model,
            api_base=config.api_base,
            api_key_env=config.api_key_env,
            max_steps=config.probe_max_steps,
            cache_dir=None if cache is None else cache / "probe",
        )
    )
    return LLMAuthor(client, probe, config)


def authoring_summary(records: list[TaskRecord]) -> dict[str, Any]:
    """How many rewrites were accepted, why the others were kept procedural, and the tokens spent."""
    return authoring_entries_summary(authoring_entry(r) for r in records)


def authoring_entry(record: TaskRecord) -> dict[str, Any] | None:
    """What the LLM author stored on a record (``metadata["authoring"]``), or None."""
    entry = record.metadata.get("authoring")
    return entry if isinstance(entry, dict) else None


def authoring_entries_summary(entries: Iterable[dict[str, Any] | None]) -> dict[str, Any]:
    """`authoring_summary` from the records' authoring entries alone (a streamed run keeps only these)."""
    tried = [e for e in entries if e is not None]
    reasons: dict[str, int] = {}
    for entry in tried:
        for reason in entry.get("reasons", []):
            key = reason.split(":", 1)[0]
            reasons[key] = reasons.get(key, 0) + 1
    return {
        "tried": len(tried),
        "accepted": sum(bool(e.get("accepted")) for e in tried),
        "kept_procedural": {"count": sum(not e.get("accepted") for e in tried), "by_stage": reasons},
        "author_tokens": sum(int(e.get("tokens", 0)) for e in tried),
        "probe_tokens": sum(int(e.get("probe_tokens", 0)) for e in tried),
    }
