"""`other-input`: the reference, but the call that reveals the answer is asked about other values.

A task's final answer is read from one call given a value the chain found (a simulated lookup of
that code, a search for that date). A policy that skips the chain, asks the same tool about values
it has at hand (the value the request starts from, strings its own earlier calls showed, fresh
values of the same kind) and answers what at least two of them led to must not earn the reward:
where it does, the answer does not depend on the chain (a world model that answers every question
alike, a value drawn from a few, a field every record shares) and finding it teaches nothing. An
answer one value led to is that value's own record, not a guess; nor does a reply that only
repeats the value asked about count. The policy is blind (`ComposeAttack.blind`): it never gives
the tool the chain's value, so ending with the right reply is a break. It attacks only tasks whose
answer comes from a read with arguments bound to the chain and no listing row picked by value
(`fixed-row` covers those), and whose later calls do not use that answer."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from envpipeline.models.task import Binding, TaskRecord
from envpipeline.redteam.base import ComposeAttack, RedTeamPolicy
from envpipeline.redteam.probe import strings_in, writes
from envpipeline.redteam.registry import register_policy
from envpipeline.services import vocab
from envpipeline.services.links import value_at

#: values asked about: the start value and strings earlier calls showed (at most PROBES), then
#: FRESH values of the carried kind
PROBES = 8
FRESH = 3
#: how many different values must lead to the same answer for the policy to give it
AGREEING = 2


def _reveal(task: TaskRecord) -> Binding | None:
    final = task.metadata.get("final_reveal")
    return Binding.model_validate(final) if final else None


def _probes(task: TaskRecord, observations: list[dict[str, Any]], carried: list[str]) -> list[str]:
    """The values the policy asks about instead of the chain's (never the carried ones): the value
    the request starts from, strings its own earlier calls showed, fresh values of the same kind."""
    planted = [str(v) for v in task.metadata.get("planted_values", [])]
    types = task.metadata.get("value_types", [])
    kind = next((types[i] for i, v in enumerate(planted) if v in carried and i < len(types)), "code")
    seen = [s for o in observations for s in strings_in(o.get("data"))]
    rng = random.Random(task.task_id)
    fresh = [vocab.sample_value(kind, rng) for _ in range(FRESH)]
    known = [v for v in dict.fromkeys([*planted[:1], *seen]) if v not in carried][:PROBES]
    return known + [v for v in fresh if v not in carried]


class OtherInput(RedTeamPolicy):
    name = "other-input"
    description = (
        "the reference, asking the call that reveals the answer about other values and answering "
        "what two of them led to"
    )
    families = frozenset({"compose"})

    def applies_to(self, task: TaskRecord) -> bool:
        reveal = _reveal(task)
        steps = task.reference_solution
        if reveal is None or reveal.step >= len(steps) or any(isinstance(k, dict) for k in reveal.path):
            return False
        step = steps[reveal.step]
        later = [b.step for s in steps[reveal.step + 1 :] for b in s.bindings.values()]
        return bool(step.bindings) and reveal.step not in later and not writes(step.tool, unknown=True)

    def attack_compose(self, attack: ComposeAttack) -> str:
        reveal = _reveal(attack.task)
        assert reveal is not None  # `applies_to` held
        gold = attack.task.reference_solution[reveal.step]
        resolved = attack.reference.steps
        observations: list[dict[str, Any]] = []
        answers: Counter[str] = Counter()
        attack.blind = True
        for index, step in enumerate(resolved):
            if index != reveal.step:
                observations.append(attack.call(step.tool, dict(step.arguments)))
                continue
            carried = [str(step.arguments[arg]) for arg in gold.bindings]
            for value in _probes(attack.task, observations, carried):
                arguments = dict(step.arguments)
                for arg, binding in gold.bindings.items():
                    arguments[arg] = binding.fill(value)
                said = value_at([attack.call(step.tool, arguments)], 0, reveal.path)
                if said is not None and not isinstance(said, (dict, list)) and str(said) != value:
                    answers[str(said)] += 1
            observations.append({})  # the call it never made with the chain's value
        expected = value_at(attack.reference.observations, reveal.step, reveal.path)
        # an answer the tool gave once is what that one value led to; given for several, it is
        # what the tool says whatever it is asked
        guess, times = answers.most_common(1)[0] if answers else ("", 0)
        guess = guess if times >= AGREEING else ""
        if expected is not None and str(expected):
            return attack.reference.output.replace(str(expected), guess)
        return guess


register_policy(OtherInput())
