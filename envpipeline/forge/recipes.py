"""Synthesis recipes: Envs-FORGE's MILP selection and the paper's fixed-recipe baselines.

Every recipe runs through the same loop (`run_forge`: synthesis, gold verification, exactly N),
so the paper's comparison (section 4, appendix A.1/C.1) can be reproduced. A fixed recipe is a
*restricted action mask* in the same action space (the paper's rho_{b,a,d}): it allows one action
variant, so every seed gets that action whatever its pass rate, with no policy-relative choice:

=============  ==============================  ===============================================
recipe         allowed action (mask)           procedural meaning (see `forge.knobs`)
=============  ==============================  ===============================================
milp           all six, chosen by the MILP     knobs moved per the selected action
few-shot       diversify_frontier/in_depth     a new instance of the seed's family at its knobs
self-instruct  diversify_frontier/in_breadth   drawn from a bootstrapped pool: accepted bundles
                                               join the pool and later tasks derive from them
evol-depth     increase_complexity/in_depth    Evol-Instruct in-depth: harder along depth knobs
evol-breadth   diversify_frontier/in_breadth   Evol-Instruct in-breadth: a neighbouring variant
=============  ==============================  ===============================================

With the LLM synthesizer a fixed recipe gets the paper's shared baseline template with its own
strategy sentence (`synth.prompts.baseline_messages`), not the solver payload and skill subgraph;
few-shot and self-instruct also show `shots` example tasks.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from envpipeline.errors import ConfigError
from envpipeline.models.selection import Decision, SeedPassRate, SelectionTrace
from envpipeline.select.actions import ACTIONS, SelectorConfig

ALL_ACTIONS: tuple[str, ...] = tuple(f"{p}/{d}" for p, d in ACTIONS)


class Recipe(BaseModel):
    """How decisions are made and how the synthesizer is prompted for them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str
    actions: Annotated[tuple[str, ...], Field(description="the restricted action mask (allowed variants)")]
    strategy: Annotated[
        str, Field(description="the prompt strategy: envs_forge, or a baseline key of synth.prompts")
    ]
    pool: Annotated[bool, Field(description="accepted bundles join the pool later tasks are drawn from")] = (
        False
    )
    shots: Annotated[int, Field(ge=0, description="example tasks shown to the LLM besides the seed")] = 0

    @property
    def selector(self) -> bool:
        """True when the MILP chooses among several actions (False: the mask fixes the action)."""
        return len(self.actions) > 1


RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in (
        Recipe(
            name="milp",
            description="Envs-FORGE: the MILP selects projection and direction per seed",
            actions=ALL_ACTIONS,
            strategy="envs_forge",
        ),
        Recipe(
            name="few-shot",
            description="a close variant preserving the seed's structure, shown k example seeds",
            actions=("diversify_frontier/in_depth",),
            strategy="few_shot",
            shots=2,
        ),
        Recipe(
            name="self-instruct",
            description="a related task in the same domain, drawn from a pool that accepted bundles join",
            actions=("diversify_frontier/in_breadth",),
            strategy="self_instruct",
            pool=True,
            shots=2,
        ),
        Recipe(
            name="evol-depth",
            description="Evol-Instruct in-depth: a harder constraint or edge case on every seed",
            actions=("increase_complexity/in_depth",),
            strategy="evol_instruct_in_depth",
        ),
        Recipe(
            name="evol-breadth",
            description="Evol-Instruct in-breadth: a neighbouring task type from every seed",
            actions=("diversify_frontier/in_breadth",),
            strategy="evol_instruct_in_breadth",
        ),
    )
}


def get_recipe(name: str) -> Recipe:
    """The recipe called `name` (ConfigError naming the known ones otherwise)."""
    if name not in RECIPES:
        raise ConfigError(f"unknown recipe '{name}' ({', '.join(RECIPES)})")
    return RECIPES[name]


def recipe_decisions(
    rates: list[SeedPassRate],
    recipe: str,
    *,
    mode: str = "portfolio",
    backend: str = "scip",
    config: SelectorConfig | None = None,
) -> tuple[list[Decision], SelectionTrace]:
    """The decisions of a recipe, each recording it: the MILP's for milp; for a fixed recipe
    every eligible seed's candidate of the allowed action (an exact local selection over a
    one-action mask, so no choice is made)."""
    from envpipeline.select.selector import select_actions

    spec = get_recipe(recipe)
    if spec.selector:
        decisions, trace = select_actions(rates, mode=mode, backend=backend, config=config)
    else:
        decisions, trace = select_actions(
            rates, mode="local", backend="enumerate", allowed_actions=spec.actions, config=config
        )
    return [d.model_copy(update={"recipe": spec.name}) for d in decisions], trace
