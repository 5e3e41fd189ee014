"""The LLM world model: a model simulates the tools a synthesized service cannot implement (CompoWorld).

CompoWorld serves "tools that cannot be reliably implemented" through a world model (seed
``000_c36d859f2860882d.txt``: the abstract, §4.1 "unreliable tools use selective world-model
simulation", and appendix B, p. 16: "World-model simulation covers tools that cannot be directly
mocked locally; 7.1% of tools rely on it"). The paper text we hold does not quote the simulator's
prompt verbatim, so `WORLD_MODEL_PROMPT` is our wording of what the paper and this codebase say the
simulator is given: the tool spec (name, description, argument schema), the call's arguments, and
the service's current state, with the tool's output schema as the contract of the answer.

`LLMWorldModel` implements `envpipeline.services.worldmodel.WorldModel`:

- the reply must be one JSON object; it is validated against the tool's ``outputSchema`` with
  JSON Schema (a non-object schema is answered as ``{"result": <value>}``), and an invalid reply
  is repaired with the validation errors at most `max_repairs` times, then `WorldModelError`;
- determinism: the answer is kept per *canonical call* (service, tool, canonical JSON arguments),
  in memory and, with `answers_dir`, on disk. The first answer sees the state; the same call
  later gets the same answer whatever the state, so a task planted with a simulated value stays
  verifiable when the reference is replayed in another process;
- tokens: `usage()` is the client's (`LLMClient`: live vs cached requests); `stats` counts
  simulations, answers served from memory or disk, repairs and failures.

`build_world_model` turns a `WorldModelConfig` (``offline`` | ``llm``) into a world model;
`install_world_model` makes it the one every imported library service consults.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from envpipeline.errors import ConfigError, EnvpipelineError, LLMError, MissingExtraError
from envpipeline.llm.cache import ResponseCache
from envpipeline.llm.protocol import LLM
from envpipeline.llm.structured import ReplyRejected, ask_structured, json_object
from envpipeline.llm.usage import UsageSnapshot
from envpipeline.models.base import Strict
from envpipeline.services import mcp_values
from envpipeline.services.worldmodel import OfflineWorldModel, WorldModel, canonical_json

#: characters of the dumped state shown to the model (a longer state is cut, and the prompt says so)
STATE_CHARS = 12_000

WORLD_MODEL_PROMPT = """\
You are the world model of a simulated software service. An agent called one of the service's
tools that cannot be implemented locally (it depends on the outside world or on judgement); you
answer in its place, as the real service would.

Rules:
- Answer with exactly one JSON object: the tool's response. No prose, no markdown fences.
- The response must validate against the tool's output schema when one is given.
- Stay consistent with the service's current state: refer only to records that exist there, use
  their real ids and values, and never contradict them.
- Be realistic and specific (plausible names, numbers, dates); never say you are simulating.
- Do not change the state: describe the tool's result only."""


class WorldModelError(LLMError):
    """The model gave no valid response to a simulated call within its repairs."""


class WorldModelConfig(Strict):
    """Which world model answers simulated tools: the offline default or an LLM."""

    kind: Annotated[Literal["offline", "llm"], Field(description="offline (seeded) or llm")] = "offline"
    model: Annotated[str | None, Field(description="llm: litellm model, e.g. openai/gpt-4o-mini")] = None
    api_base: Annotated[str | None, Field(description="llm: OpenAI-compatible endpoint")] = None
    api_key_env: Annotated[str | None, Field(description="llm: environment variable with the key")] = None
    temperature: Annotated[float, Field(ge=0, le=2, description="llm: sampling temperature")] = 0.0
    max_repairs: Annotated[int, Field(ge=0, description="llm: repair turns after an invalid reply")] = 2
    cache_dir: Annotated[
        Path | None,
        Field(description="llm: requests cache (requests/) and per-call answers (answers/); None = memory"),
    ] = None

    @model_validator(mode="after")
    def _model_for_llm(self) -> WorldModelConfig:
        if self.kind == "llm" and not self.model:
            raise ValueError("the llm world model needs a model (e.g. openai/gpt-4o-mini)")
        return self


@dataclass
class WorldModelStats:
    """What an `LLMWorldModel` did: calls answered, from where, and with how many repairs."""

    simulations: int = 0
    memory_hits: int = 0
    disk_hits: int = 0
    llm_answers: int = 0
    repairs: int = 0
    failures: int = 0


def call_key(service: str, tool: str, arguments: dict[str, Any]) -> str:
    """The identity of one simulated call: sha256 over service, tool and canonical arguments."""
    return hashlib.sha256(f"{service}\x00{tool}\x00{canonical_json(arguments)}".encode()).hexdigest()


def _validator(schema: dict[str, Any]) -> Any:
    try:
        from jsonschema import Draft202012Validator
        from jsonschema.validators import validator_for
    except ImportError as missing:
        raise MissingExtraError("llm", missing, needed_by="envpipeline.services.llm_worldmodel") from missing
    cls = validator_for(schema, default=Draft202012Validator)
    return cls(schema)


def schema_reasons(value: Any, schema: dict[str, Any]) -> list[str]:
    """Where `value` breaks the JSON Schema `schema`, one reason per error (``path: message``)."""
    errors = sorted(_validator(schema).iter_errors(value), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}" for e in errors]


def _tool_facts(service: str, tool: str, specs: Mapping[str, Mapping[str, dict[str, Any]]]) -> dict[str, Any]:
    """The tool's description and argument schema: from `specs`, else from the service registry."""
    if tool in specs.get(service, {}):
        return dict(specs[service][tool])
    from envpipeline.services.registry import get_service

    try:
        tool_def = get_service(service).tools[tool]
    except (EnvpipelineError, KeyError):
        return {"name": tool}
    function = tool_def.json_schema(service)["function"]
    return {"name": tool, "description": function["description"], "inputSchema": function["parameters"]}


def world_model_messages(
    service: str,
    tool: str,
    arguments: dict[str, Any],
    output_schema: dict[str, Any] | None,
    state: dict[str, Any] | None,
    facts: dict[str, Any],
) -> list[dict[str, Any]]:
    """The world-model request: the tool spec, the arguments, the service state, the output contract."""
    state_text = json.dumps(state, sort_keys=True, ensure_ascii=False) if state is not None else None
    if state_text is not None and len(state_text) > STATE_CHARS:
        state_text = (
            f"{state_text[:STATE_CHARS]} ... [cut: {STATE_CHARS} of {len(state_text)} characters shown]"
        )
    contract = (
        f"Output schema (the response must validate against it):\n{json.dumps(output_schema, sort_keys=True)}"
        if output_schema
        else "The tool declares no output schema: answer with a non-empty JSON object."
    )
    if output_schema and mcp_values.schema_type(output_schema) != "object":
        contract += '\nThe schema is not an object: answer {"result": <a value valid against it>}.'
    user = "\n\n".join(
        [
            f"Service: {service}",
            f"Tool spec:\n{json.dumps(facts, sort_keys=True, ensure_ascii=False)}",
            f"Arguments:\n{canonical_json(arguments)}",
            f"Current service state:\n{state_text}" if state_text else "Current service state: not given.",
            contract,
        ]
    )
    return [{"role": "system", "content": WORLD_MODEL_PROMPT}, {"role": "user", "content": user}]


def response_validator(output_schema: dict[str, Any] | None) -> Any:
    """A validator for `ask_structured`: reply text -> the response object, or `ReplyRejected`."""

    def validate(text: str | None) -> dict[str, Any]:
        data = json_object(text)
        if not output_schema:
            if not data:
                raise ReplyRejected(["the response is an empty object; say what the tool returned"])
            return data
        if mcp_values.schema_type(output_schema) == "object":
            reasons = schema_reasons(data, output_schema)
        elif "result" not in data:
            reasons = ['the schema is not an object: answer {"result": <value>}']
        else:
            reasons = [f"result: {r}" for r in schema_reasons(data["result"], output_schema)]
        if reasons:
            raise ReplyRejected(reasons)
        return data

    return validate


class LLMWorldModel:
    """A `WorldModel` answered by an LLM, schema-validated, repaired, and fixed per canonical call."""

    def __init__(
        self,
        llm: LLM,
        *,
        max_repairs: int = 2,
        answers_dir: Path | None = None,
        tool_specs: Mapping[str, Mapping[str, dict[str, Any]]] | None = None,
    ) -> None:
        """Args:
        llm: the model (`LLMClient` with a disk cache, or `ScriptedLLM`).
        max_repairs: repair turns after a reply that breaks the output schema.
        answers_dir: where each call's accepted answer is kept (None: this process only).
        tool_specs: service -> tool -> {description, inputSchema} shown to the model; tools not
            listed are described from the service registry.
        """
        if max_repairs < 0:
            raise ConfigError(f"max_repairs must be >= 0, got {max_repairs}")
        self.llm = llm
        self.max_repairs = max_repairs
        self.tool_specs = tool_specs or {}
        self.stats = WorldModelStats()
        self._answers: dict[str, dict[str, Any]] = {}
        self._failures: dict[str, str] = {}
        self._store = ResponseCache(answers_dir) if answers_dir is not None else None
        self._lock = threading.Lock()

    def usage(self) -> UsageSnapshot:
        """The model's calls, cached calls and tokens so far."""
        return self.llm.usage()

    def simulate(
        self,
        service: str,
        tool: str,
        arguments: dict[str, Any],
        output_schema: dict[str, Any] | None,
        *,
        state: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The response of one simulated call (see the module docstring).

        Raises:
            WorldModelError: no reply validated within `max_repairs` repairs (the same call then
                fails the same way again in this process).
            LLMError: the endpoint failed.
        """
        key = call_key(service, tool, arguments)
        with self._lock:
            self.stats.simulations += 1
            if key in self._answers:
                self.stats.memory_hits += 1
                return json.loads(json.dumps(self._answers[key]))
            if key in self._failures:
                raise WorldModelError(self._failures[key])
            stored = self._store.get(key) if self._store is not None else None
            if stored is not None and isinstance(stored.get("response"), dict):
                self.stats.disk_hits += 1
                self._answers[key] = stored["response"]
                return json.loads(json.dumps(stored["response"]))
            facts = _tool_facts(service, tool, self.tool_specs)
            messages = world_model_messages(service, tool, arguments, output_schema, state, facts)
            outcome = ask_structured(
                self.llm, messages, response_validator(output_schema), max_repairs=self.max_repairs
            )
            self.stats.repairs += outcome.repairs
            if outcome.value is None:
                self.stats.failures += 1
                reasons = "; ".join(outcome.failures)
                self._failures[key] = (
                    f"the world model gave no valid response to {service}.{tool} after "
                    f"{len(outcome.attempts)} replies: {reasons}"
                )
                raise WorldModelError(self._failures[key])
            self.stats.llm_answers += 1
            self._answers[key] = outcome.value
            if self._store is not None:
                call = {"service": service, "tool": tool, "arguments": arguments}
                self._store.put(key, {"call": call, "response": outcome.value})
            return json.loads(json.dumps(outcome.value))


def build_world_model(config: WorldModelConfig) -> WorldModel:
    """The configured world model: `OfflineWorldModel`, or an `LLMWorldModel` over an `LLMClient`."""
    if config.kind == "offline":
        return OfflineWorldModel()
    from envpipeline.llm.client import LLMClient, LLMConfig

    assert config.model is not None  # the config's validator
    client = LLMClient(
        LLMConfig(
            model=config.model,
            api_base=config.api_base,
            api_key_env=config.api_key_env,
            temperature=config.temperature,
            cache_dir=None if config.cache_dir is None else config.cache_dir / "requests",
        )
    )
    answers = None if config.cache_dir is None else config.cache_dir / "answers"
    return LLMWorldModel(client, max_repairs=config.max_repairs, answers_dir=answers)


def install_world_model(model: WorldModel) -> list[str]:
    """Make `model` answer the simulated tools of every imported library service; their names.

    Call it before composing: links derived earlier keep the model they were derived with.
    """
    from envpipeline.services.mcp_import import ImportedService
    from envpipeline.services.registry import all_services

    changed = []
    for name, cls in all_services().items():
        if isinstance(cls, type) and issubclass(cls, ImportedService):
            cls.world_model = model
            changed.append(name)
    return changed
