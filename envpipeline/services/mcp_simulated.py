"""The answer of one simulated tool of an imported service: known ids checked, writes recorded.

Shared by the service's tool implementation (`mcp_import`) and the hops planted through simulated
reads (`mcp_links`).
"""

from __future__ import annotations

from typing import Any

from envpipeline.services import mcp_values
from envpipeline.services.base import not_found
from envpipeline.services.mcp_spec import ImportedState, Shape
from envpipeline.services.mcp_store import answer_read, record_write, unknown_id
from envpipeline.services.worldmodel import WorldModel, call_seed


def simulated_answer(
    service_name: str,
    state: ImportedState,
    shape: Shape,
    data: dict[str, Any],
    world_model: WorldModel,
    fam: str,
    writes: bool,
    id_args: list[str],
) -> dict[str, Any]:
    """The response of a simulated tool on `state`, recorded there when the tool writes (`mcp_store`)."""
    spec = shape.spec
    unknown = unknown_id(state.simulated, data, id_args, spec.properties)
    if unknown is not None:
        raise not_found(" ".join(mcp_values.words(unknown[0])[:-1]) or "item", unknown[1])
    seed = call_seed(service_name, spec.name, data)

    def ask() -> dict[str, Any]:
        # a world model that declares it never reads the state is spared its dump (`reads_state`):
        # on a service of many collections the dump costs far more than the answer
        dumped = state.model_dump(mode="json") if getattr(world_model, "reads_state", True) else None
        return world_model.simulate(service_name, spec.name, data, spec.output_schema, state=dumped)

    if writes:
        response = ask()
        record_write(state.simulated, fam, spec.name, data, response)
        return response
    return answer_read(state.simulated, fam, spec.name, data, spec.output_schema, ask, seed)
