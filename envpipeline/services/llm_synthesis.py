"""LLM spec-to-service synthesis: a model plans the service, the contract decides whether it joins.

CompoWorld's "coding agents turn tool specifications into verified services with typed states";
"each deterministic implementation must pass automatically generated tests for basic scenarios
such as normal invocation and error handling" (seed ``000_c36d859f2860882d.txt``: abstract, §4.1,
appendix B p. 16). Here the model never writes code: it answers with a `ServicePlan`, and the
executable service stays the typed, deterministic `ImportedService` of `mcp_import`:

- ``tools``: each tool's role: a CRUD operation (create/get/list/search/update/delete) on a named
  collection, or ``simulated`` (answered by the world model). This replaces the name-shape guess
  (``fetch_page`` can be a get on ``pages``; ``archive_thread`` an update);
- ``collections``: per collection, how many records the initial state holds and pools of realistic
  values per field; the state generator draws from the pools with the seed's rng (ids and
  references stay consistent), so the state is domain-plausible and still seed-dependent;
- ``title``/``domain``: how the library lists it.

The plan is validated with pydantic and against the spec (every tool planned once, CRUD roles name
a collection, pools only for real, non-id fields), the service is built from it, and the generated
contract (`envpipeline.services.contract.check_service`) runs. Any failure goes back to the model
as a repair turn (at most `max_repairs`); a service that never passes is refused with the reasons
and does not join the library (`join_library`).
"""

from __future__ import annotations

import dataclasses
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, model_validator

from envpipeline.errors import ServiceError, SpecError
from envpipeline.llm.protocol import LLM
from envpipeline.llm.structured import (
    ReplyRejected,
    StructuredAttempt,
    ask_structured,
    json_object,
    pydantic_reasons,
)
from envpipeline.models.base import Strict
from envpipeline.services.base import is_id_field
from envpipeline.services.contract import check_service
from envpipeline.services.mcp_import import (
    ImportedService,
    SynthesisReport,
    synthesis_report,
    synthesize_service,
)
from envpipeline.services.mcp_spec import QUERY_ARGS, Shape, ToolSpec, classify, id_target, parse_tools_list
from envpipeline.services.mcp_values import schema_type
from envpipeline.services.registry import register_service
from envpipeline.services.worldmodel import WorldModel

Role = Literal["create", "get", "list", "search", "update", "delete", "simulated"]
#: contract failures quoted back per repair turn
MAX_FAILURES = 10

SYNTHESIS_PROMPT = """\
You turn MCP tool specifications into a mock service with typed state. You do not write code:
you answer with a JSON plan that a deterministic builder executes and tests.

The plan:
{
  "title": "<human name of the service>",
  "domain": "<one word: software, finance, travel, ...>",
  "tools": {"<tool name>": {"role": "create|get|list|search|update|delete|simulated",
                            "collection": "<plural snake_case collection, null when simulated>"}},
  "collections": {"<collection>": {"records": <1..20 records in the initial state>,
                                   "values": {"<record field>": [<realistic values>]}}}
}

Rules:
- Plan every tool exactly once. CRUD roles name the collection they act on; create/list/search
  tools define collections, get/update/delete need the collection's id argument; tools that depend
  on the outside world or on judgement are "simulated".
- Record fields are the create/update tools' arguments; value pools must fit their types, and id
  fields are filled by the builder (no pools for them).
- The initial state must depend on its seed: give pools several distinct values.
- Answer with the JSON object only."""


class ToolRole(Strict):
    """How one tool is served."""

    role: Annotated[Role, Field(description="CRUD operation or simulated")]
    collection: Annotated[str | None, Field(description="the collection a CRUD tool acts on")] = None


class CollectionPlan(Strict):
    """One collection of the initial state: how many records and which values to draw from."""

    records: Annotated[int, Field(ge=1, le=20, description="records in the initial state")] = 4
    values: Annotated[
        dict[str, Annotated[list[Any], Field(min_length=1)]],
        Field(description="field -> pool of realistic values drawn with the seed's rng"),
    ] = {}


class ServicePlan(Strict):
    """The model's proposal for one service."""

    title: Annotated[str, Field(min_length=1, max_length=80)]
    domain: Annotated[str, Field(min_length=1, max_length=40)] = "imported"
    tools: Annotated[dict[str, ToolRole], Field(description="every tool of the spec -> its role")]
    collections: Annotated[dict[str, CollectionPlan], Field(description="initial-state plan")] = {}


@dataclass
class LLMSynthesisResult:
    """The synthesized service (None when refused), its plan, report and every attempt."""

    service_name: str
    service: type[ImportedService] | None
    plan: ServicePlan | None
    attempts: list[StructuredAttempt]
    #: the contract's failures of a procedural synthesis (no attempts there)
    procedural_failures: list[str] = dataclasses.field(default_factory=list)

    @property
    def accepted(self) -> bool:
        """True when a plan's service passed the contract."""
        return self.service is not None

    @property
    def reasons(self) -> list[str]:
        """Why the last attempt was rejected (empty when accepted)."""
        if self.accepted:
            return []
        return (
            self.attempts[-1].failures
            if self.attempts
            else [f"contract: {f}" for f in self.procedural_failures]
        )

    @property
    def total_tokens(self) -> int:
        """Tokens spent over every attempt (cache hits excluded)."""
        return sum(a.prompt_tokens + a.completion_tokens for a in self.attempts)

    def report(self) -> SynthesisReport | None:
        """Tools, collections and simulated share of the accepted service."""
        return synthesis_report(self.service) if self.service is not None else None


def plan_shapes(specs: list[ToolSpec], plan: ServicePlan) -> list[Shape]:
    """The tools' shapes as the plan assigns them; refs, id and query arguments derived as `classify` does.

    Raises:
        ReplyRejected: a CRUD role the spec cannot serve (no id argument, nothing to update).
    """
    shapes = [
        Shape(s, None if (r := plan.tools[s.name]).role == "simulated" else r.role, r.collection)
        for s in specs
    ]
    for shape in shapes:
        if shape.simulated:
            shape.reason = "the model's plan gives it to the world model"
    collections = {s.collection for s in shapes if s.collection}
    problems = []
    for shape in shapes:
        props = shape.spec.properties
        shape.refs = {
            a: t for a in props if (t := id_target(a)) in collections and schema_type(props[a]) == "string"
        }
        if shape.op in ("get", "update", "delete"):
            own = [a for a, t in shape.refs.items() if t == shape.collection]
            if "id" in props and schema_type(props["id"]) == "string":
                own.insert(0, "id")
            shape.id_arg = next((a for a in own if a in shape.spec.required), None)
            if shape.id_arg is None:
                problems.append(
                    f"tools.{shape.spec.name}: a {shape.op} on '{shape.collection}' needs a required id "
                    f"argument of that collection (e.g. '{(shape.collection or 'x').rstrip('s')}Id')"
                )
                continue
            shape.refs[shape.id_arg] = shape.collection  # type: ignore[assignment]
        if shape.op == "update" and not (set(props) - {shape.id_arg}):
            problems.append(f"tools.{shape.spec.name}: an update needs a field to change")
        if shape.op == "search":
            strings = [a for a, s in props.items() if schema_type(s) == "string" and a not in shape.refs]
            shape.query_arg = next((a for a in QUERY_ARGS if a in strings), None)
    if problems:
        raise ReplyRejected(problems)
    return shapes


def plan_failures(specs: list[ToolSpec], plan: ServicePlan) -> list[str]:
    """Where the plan does not fit the spec (before anything is built)."""
    names = [s.name for s in specs]
    failures = [f"tools.{t}: no such tool in the spec" for t in plan.tools if t not in names]
    failures += [f"tools.{t}: not planned" for t in names if t not in plan.tools]
    for name, role in plan.tools.items():
        if role.role != "simulated" and not (role.collection and role.collection.isidentifier()):
            failures.append(f"tools.{name}: a {role.role} needs a snake_case collection")
        if role.role == "simulated" and role.collection:
            failures.append(f"tools.{name}: a simulated tool has no collection")
    defined = {r.collection for r in plan.tools.values() if r.role in ("create", "list", "search")}
    used = {r.collection for r in plan.tools.values() if r.collection}
    failures += [f"collection '{c}' has no create, list or search tool" for c in sorted(used - defined)]
    failures += [f"collections.{c}: no tool acts on it" for c in plan.collections if c not in used]
    return failures


def _with_pools(cls: type[ImportedService], plan: ServicePlan) -> None:
    """Replace the generator: the default's seeded state, cut to the plan's size, values from the pools."""
    default = cls.generate_state
    collections = set(cls.state_model.model_fields)

    def generate_state(klass: type[ImportedService], rng: random.Random) -> Any:
        data = default(rng).model_dump(mode="json", by_alias=True)
        for name, cplan in plan.collections.items():
            records = data[name]
            kept = list(records)[: cplan.records]
            data[name] = {rid: records[rid] for rid in kept}
            for rid in kept:
                for field, pool in cplan.values.items():
                    data[name][rid][field] = rng.choice(pool)
        for records in data.values():  # references into a cut collection point at a kept record
            for row in records.values():
                for field, value in row.items():
                    target = id_target(field)
                    if target in collections and isinstance(value, str) and value not in data[target]:
                        row[field] = rng.choice(sorted(data[target])) if data[target] else value
        return klass.state_model.model_validate(data)

    cls.generate_state = classmethod(generate_state)  # type: ignore[method-assign, assignment]


def pool_failures(cls: type[ImportedService], plan: ServicePlan) -> list[str]:
    """Pools for fields the records do not have, or for id fields (the builder fills those)."""
    failures = []
    for name, cplan in plan.collections.items():
        if name not in cls.state_model.model_fields:
            failures.append(f"collections.{name}: not a collection of the service")
            continue
        record = cls.state_model.model_fields[name].annotation.__args__[1]  # type: ignore[union-attr]
        fields = {f.alias or n for n, f in record.model_fields.items()}
        for field in cplan.values:
            if field not in fields:
                failures.append(f"collections.{name}.values.{field}: records have no such field")
            elif is_id_field(field):
                failures.append(f"collections.{name}.values.{field}: id fields are filled by the builder")
    return failures


def build_planned_service(
    service_name: str, payload: Any, plan: ServicePlan, world_model: WorldModel | None = None
) -> type[ImportedService]:
    """The service a plan describes (not yet checked by the contract).

    Raises:
        ReplyRejected: the plan does not fit the spec.
        SpecError: the spec itself is malformed (not the model's fault).
    """
    specs = parse_tools_list(payload)
    if failures := plan_failures(specs, plan):
        raise ReplyRejected(failures)
    shapes = plan_shapes(specs, plan)
    cls = synthesize_service(
        service_name,
        payload,
        world_model,
        title=plan.title,
        domain=plan.domain,
        classifier=lambda _specs: shapes,
    )
    if failures := pool_failures(cls, plan):
        raise ReplyRejected(failures)
    _with_pools(cls, plan)
    return cls


def contract_failures(cls: type[ImportedService]) -> list[str]:
    """The generated contract's failures; a check that crashes is a failure too."""
    try:
        return check_service(cls)
    except (ValidationError, ServiceError, KeyError, StopIteration, TypeError, ValueError) as e:
        return [f"the contract could not run: {type(e).__name__}: {str(e)[:300]}"]


def synthesis_messages(service_name: str, payload: Any) -> list[dict[str, Any]]:
    """The request: the spec's tools and the default classification as a starting point."""
    specs = parse_tools_list(payload)
    guess = {s.spec.name: {"role": s.op or "simulated", "collection": s.collection} for s in classify(specs)}
    tools = [
        {
            "name": s.name,
            "description": s.description,
            "inputSchema": {"properties": s.properties, "required": s.required},
        }
        for s in specs
    ]
    user = (
        f"Service name: {service_name}\n\nTools (MCP tools/list):\n{json.dumps(tools, sort_keys=True)}\n\n"
        f"A name-based guess of the roles, to improve on:\n{json.dumps(guess, sort_keys=True)}"
    )
    return [{"role": "system", "content": SYNTHESIS_PROMPT}, {"role": "user", "content": user}]


def synthesize_with_llm(
    service_name: str,
    payload: Any,
    llm: LLM,
    *,
    max_repairs: int = 2,
    world_model: WorldModel | None = None,
) -> LLMSynthesisResult:
    """Ask `llm` for a plan, build the service, run the contract; repair at most `max_repairs` times.

    Raises:
        SpecError: the spec is malformed (checked before any request).
        LLMError: the endpoint failed.
    """
    parse_tools_list(payload)  # a malformed spec is the caller's error, not a model's

    def validate(text: str | None) -> tuple[ServicePlan, type[ImportedService]]:
        try:
            plan = ServicePlan.model_validate(json_object(text))
        except ValidationError as e:
            raise ReplyRejected(pydantic_reasons(e)) from e
        try:
            cls = build_planned_service(service_name, payload, plan, world_model)
        except SpecError as e:
            raise ReplyRejected([f"the plan builds no service: {e}"]) from e
        if failures := contract_failures(cls):
            shown = failures[:MAX_FAILURES]
            more = len(failures) - len(shown)
            raise ReplyRejected(
                [f"contract: {f}" for f in shown] + ([f"... and {more} more"] if more else [])
            )
        return plan, cls

    outcome = ask_structured(
        llm, synthesis_messages(service_name, payload), validate, max_repairs=max_repairs
    )
    plan, cls = outcome.value if outcome.value is not None else (None, None)
    return LLMSynthesisResult(service_name, cls, plan, outcome.attempts)


class SynthesizerConfig(Strict):
    """Who turns a spec into a service: the name-shape default or an LLM plan (both contract-gated)."""

    kind: Annotated[Literal["procedural", "llm"], Field(description="procedural or llm")] = "procedural"
    model: Annotated[str | None, Field(description="llm: litellm model, e.g. openai/gpt-4o-mini")] = None
    api_base: Annotated[str | None, Field(description="llm: OpenAI-compatible endpoint")] = None
    api_key_env: Annotated[str | None, Field(description="llm: environment variable with the key")] = None
    max_repairs: Annotated[int, Field(ge=0, description="llm: repair turns after a failing plan")] = 2
    cache_dir: Annotated[Path | None, Field(description="llm: disk cache of the replies")] = None

    @model_validator(mode="after")
    def _model_for_llm(self) -> SynthesizerConfig:
        if self.kind == "llm" and not self.model:
            raise ValueError("the llm synthesizer needs a model (e.g. openai/gpt-4o-mini)")
        return self


def synthesize_by_config(
    service_name: str, payload: Any, config: SynthesizerConfig, world_model: WorldModel | None = None
) -> LLMSynthesisResult:
    """Synthesize with the configured synthesizer; either way the result carries the contract's verdict.

    The procedural result has no attempts; a failing contract leaves `service` None and puts the
    failures in `procedural_failures`.
    """
    if config.kind == "llm":
        from envpipeline.llm.client import LLMClient, LLMConfig

        assert config.model is not None  # the config's validator
        client = LLMClient(
            LLMConfig(
                model=config.model,
                api_base=config.api_base,
                api_key_env=config.api_key_env,
                temperature=0.0,
                cache_dir=config.cache_dir,
            )
        )
        return synthesize_with_llm(
            service_name, payload, client, max_repairs=config.max_repairs, world_model=world_model
        )
    cls = synthesize_service(service_name, payload, world_model)
    failures = contract_failures(cls)
    result = LLMSynthesisResult(service_name, None if failures else cls, None, [])
    result.procedural_failures = failures
    return result


def join_library(result: LLMSynthesisResult) -> type[ImportedService]:
    """Register an accepted service; a refused one never joins (ServiceError with the reasons)."""
    if result.service is None:
        raise ServiceError(
            f"service '{result.service_name}' failed its contract "
            f"({len(result.attempts)} model replies): " + "; ".join(result.reasons)
        )
    return register_service(result.service)
