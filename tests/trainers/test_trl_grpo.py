"""TRL 1.16 GRPOTrainer trains on our TRL rows with our environment_factory and reward function.

Real library, CPU, a tiny random Qwen2 model and a locally trained tokenizer (tests/trainers/tiny.py).

- A random policy: one training step over composed, world and terminal rows (TRL's
  multi-environment mode, ``environment_factories()`` keyed by the rows' ``environment`` column).
- A scripted policy through the trainer's own call path: only ``_generate_single_turn`` (the
  model's sampling) is replaced; TRL parses the ``<tool_call>`` blocks with the tokenizer's
  response template, runs them on the environments' public methods (its tool loop), appends the
  tool responses, asks for the next turn, and scores with ``env.get_reward()`` and our
  ``trl_reward_fn(environments=...)``, then takes an optimizer step. In each group one rollout
  replays the reference (the SFT trajectory, or the bundle's solve.sh through ``exec``) and
  submits the answer: reward 1.0; the other gives up at once: reward 0.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")

from datasets import Dataset  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402

from envpipeline.export.rewards import trl_reward_fn  # noqa: E402
from envpipeline.export.rows import trl_rl_row  # noqa: E402
from envpipeline.models.dataset import AcceptedTask  # noqa: E402
from envpipeline.sandbox.detect import available_backends  # noqa: E402
from envpipeline.trainers.replay import episode_call  # noqa: E402
from envpipeline.trainers.trl_env import environment_factories  # noqa: E402
from tests.export_fixture import build_tasks  # noqa: E402
from tests.trainers.tiny import tiny_model, tiny_tokenizer  # noqa: E402

GIVE_UP = "I give up.<|im_end|>"


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> list[AcceptedTask]:
    built = build_tasks(tmp_path_factory.mktemp("grpo-data"))
    families = ["compose", "world"] + (["terminal"] if available_backends() else [])
    return [next(t for t in built if t.family == family) for family in families]


def tool_call(name: str, arguments: dict[str, Any]) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call><|im_end|>"


def reference_turns(task: AcceptedTask) -> list[str]:
    """The reference as assistant turns: one tool call each, submit_answer, then a closing text."""
    if task.family == "terminal":
        bundle = Path(json.loads(task.env_spec)["environment"]["bundle_path"])
        script = (bundle / "solution" / "solve.sh").read_text()
        calls = [("exec", {"command": f"bash -c {shlex.quote(script)}"})]
        answer = "done"
    else:
        messages = task.messages() or []
        calls = [
            episode_call(call["function"]["name"], json.loads(call["function"]["arguments"] or "{}"))
            for m in messages
            for call in m.get("tool_calls") or []
        ]
        answer = next(
            m["content"] for m in reversed(messages) if m["role"] == "assistant" and m.get("content")
        )
    return [tool_call(n, a) for n, a in calls] + [
        tool_call("submit_answer", {"answer": answer}),
        "Done.<|im_end|>",
    ]


class ScriptedGRPOTrainer(GRPOTrainer):
    """GRPOTrainer whose sampling is a script: even rollouts replay the reference, odd ones give up."""

    scripts: dict[str, list[str]] = {}

    def _generate_single_turn(
        self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False
    ):
        tokenizer = self.processing_class
        completions = []
        for index, ids in enumerate(prompt_ids):
            text = tokenizer.decode(ids)
            turns = next(script for instruction, script in self.scripts.items() if instruction in text)
            turn = text.count("<tool_response>")
            if turn == 0 and index % 2 == 1:
                completions.append(tokenizer.encode(GIVE_UP, add_special_tokens=False))
            else:
                completions.append(
                    tokenizer.encode(turns[min(turn, len(turns) - 1)], add_special_tokens=False)
                )
        return completions, None


def corpus(tasks: list[AcceptedTask]) -> list[str]:
    texts = []
    for task in tasks:
        texts += [
            task.instruction,
            task.system_prompt,
            task.tools,
            task.env_spec,
            task.reference_messages or "",
        ]
        texts += reference_turns(task)
    return texts


def train(
    tasks: list[AcceptedTask], tmp_path: Path, scripted: bool
) -> tuple[GRPOTrainer, dict[str, list[list]]]:
    rows = [trl_rl_row(task, "rl", i) for i, task in enumerate(tasks)]
    tokenizer = tiny_tokenizer(corpus(tasks))
    config = GRPOConfig(
        output_dir=str(tmp_path / "out"),
        per_device_train_batch_size=2 * len(rows),
        num_generations=2,
        max_steps=1,
        max_completion_length=12000 if scripted else 24,
        learning_rate=1e-3,
        beta=0.0,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        seed=0,
    )
    cls = ScriptedGRPOTrainer if scripted else GRPOTrainer
    if scripted:
        ScriptedGRPOTrainer.scripts = {task.instruction: reference_turns(task) for task in tasks}
    trainer = cls(
        model=tiny_model(tokenizer),
        reward_funcs=[trl_reward_fn],
        args=config,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        environment_factory=environment_factories(),
    )
    recorded: dict[str, list[list]] = {}
    for i, func in enumerate(list(trainer.reward_funcs)):
        name = trainer.reward_func_names[i]

        def record(*args: Any, _func=func, _name=name, **kwargs: Any) -> list:
            out = _func(*args, **kwargs)
            families = [env.episode.family for env in kwargs["environments"]]
            recorded.setdefault(_name, []).append(list(zip(families, out)))
            return out

        trainer.reward_funcs[i] = record
    trainer.train()
    return trainer, recorded


def test_grpo_trains_a_random_policy_on_every_family(tasks: list[AcceptedTask], tmp_path: Path) -> None:
    trainer, recorded = train(tasks, tmp_path, scripted=False)
    assert trainer.state.global_step == 1
    assert {"trl_reward_fn", "ComposedTaskEnv", "WorldTaskEnv"} <= set(recorded)
    scored = [reward for calls in recorded.values() for _, reward in calls[0] if reward is not None]
    assert scored and all(0.0 <= r <= 1.0 for r in scored)
    history = trainer.state.log_history[0]
    assert "loss" in history and "reward" in history


def test_scripted_reference_scores_one_and_giving_up_zero_through_trl(
    tasks: list[AcceptedTask], tmp_path: Path
) -> None:
    trainer, recorded = train(tasks, tmp_path, scripted=True)
    assert trainer.state.global_step == 1
    env_rewards = {}
    for name in ("ComposedTaskEnv", "WorldTaskEnv", "TerminalTaskEnv"):
        for family, reward in recorded.get(name, [[]])[0]:
            if reward is not None:
                env_rewards.setdefault(family, []).append(reward)
    # rollouts alternate: reference (even) then give-up (odd), per task
    assert env_rewards == {task.family: [1.0, 0.0] for task in tasks}
    fn = [reward for _, reward in recorded["trl_reward_fn"][0]]
    assert fn[0::2] == [1.0] * len(tasks) and max(fn[1::2]) < 1.0  # CFRR per group
    assert trainer.state.log_history[0]["reward"] > 0.0
