"""Trust figures of composed tasks over many candidates: acceptance, what each new gate rejects,
red-team breaks of accepted tasks, reference replay through the served environment, ambiguous
hops and undiscovered ids in SFT trajectories (the acceptance of issue 10, CompoWorld part).

    python bench/redteam_compose.py --candidates 1000
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter

from envpipeline.agents.rollouts import sft_trajectory
from envpipeline.compose.author import ComposeConfig
from envpipeline.compose.pipeline import compose_task
from envpipeline.export.envs import ComposedTaskEnv, bind_environment
from envpipeline.models.task import TaskRecord
from envpipeline.services.base import is_id_field
from envpipeline.services.links import read_path


def replays_to_one(task: TaskRecord) -> bool:
    """The reference, played through the TRL environment on the stored task, earns reward 1."""
    stored = TaskRecord.model_validate_json(task.model_dump_json())
    env = bind_environment(ComposedTaskEnv, [stored])()
    env.reset(task_id=stored.task_id)
    observations: list[dict] = []
    for step in stored.reference_solution:
        arguments = dict(step.arguments)
        for arg, binding in step.bindings.items():
            try:
                value = read_path(observations[binding.step]["data"], binding.path)
            except (KeyError, IndexError):
                return False
            arguments[arg] = value if binding.template == "{value}" else binding.template.format(value=value)
        observations.append(json.loads(env.call_tool(step.tool, arguments)))
    env.submit_answer(stored.reference_output)
    return env.get_reward() == 1.0


def undiscovered_ids(task: TaskRecord) -> int:
    """Ids in the SFT trajectory's tool calls that no earlier message showed."""
    messages = sft_trajectory(task) or []
    seen, missing = "", 0
    for message in messages:
        for call in message.get("tool_calls") or []:
            arguments = json.loads(call["function"]["arguments"]).get("arguments") or {}
            missing += sum(
                is_id_field(k) and isinstance(v, str) and v not in seen for k, v in arguments.items()
            )
        seen += str(message.get("content") or "")
    return missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--candidates", type=int, default=1000)
    args = parser.parse_args()
    started = time.perf_counter()
    records = [compose_task(seed, ComposeConfig()) for seed in range(args.candidates)]
    seconds = time.perf_counter() - started
    accepted = [r for r in records if r.status == "accepted"]
    first_failed_gate = Counter(r.reasons[0].split(":")[0] for r in records if r.reasons)
    broke = Counter(p for r in records for g in r.gates if g.name == "red_team" for p in g.evidence["broke"])
    accepted_broken = sum(
        any(g.name == "red_team" and g.evidence["broke"] for g in r.gates) for r in accepted
    )
    report = {
        "candidates": len(records),
        "accepted": len(accepted),
        "acceptance_rate": round(len(accepted) / len(records), 4),
        "candidates_per_second": round(len(records) / seconds, 1),
        "rejected_by_first_failed_gate": dict(first_failed_gate.most_common()),
        "red_team_rejections_by_policy": dict(broke),
        "accepted_broken_by_a_policy": accepted_broken,
        "accepted_replaying_to_1": sum(replays_to_one(r) for r in accepted),
        "accepted_with_ambiguous_hops": sum(
            any(g.name == "unique_hops" and not g.passed for g in r.gates) for r in accepted
        ),
        "undiscovered_ids_in_sft": sum(undiscovered_ids(r) for r in accepted),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
