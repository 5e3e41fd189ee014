"""One pure group-scoring function and thin reward adapters for verl, TRL, verifiers and OpenRLHF.

`score_group` maps a rollout group's criteria pass matrix to rewards and GRPO advantages with one
of the registered reward modes (`envpipeline.rewards.modes`: ``cfrr`` by default, ``checklist``,
``binary``). In every mode a full pass scores 1.0 and any partial pass scores strictly less.

How a completion becomes a pass vector (`completion_passes`), per criterion of the task's rubric:

1. ``criteria_passed`` (criterion id -> bool), when the caller passes it (from ``extra_info``, a
   keyword, or ``info``), wins: environments and verifiers that saw the final state report it;
2. ``text`` criteria (compose ``final_answer``: the one value asked for, and no other candidate) are
   checked on the completion text alone;
3. ``state`` criteria of composed tasks are checked when a ``final_state`` (service -> state JSON)
   is supplied, with `envpipeline.rubric.pass_vector`;
4. anything else fails. From text alone an adapter can therefore check only the text criteria:
   world criteria (state diffs) and terminal criteria (the bundle's tests) always need
   ``criteria_passed`` from the environment / verifier, and composed state criteria need it or a
   ``final_state``. Unscorable criteria count as failed, so a text-only reward never reaches 1.0 by
   guessing the final answer.

Criteria the task's initial state already meets (``Rubric.held_at_start``: ``state_preserved``, a
kept record) earn no partial credit and void it when broken (`envpipeline.rewards.held_at_start`),
where the evidence can check them (`evidence_held`); one the evidence cannot check is not known to
still hold, and counts as an ordinary failed criterion. In a group a criterion counts as held only
when every rollout's evidence checks it.

Groups: the batch adapters regroup samples by task id (``extra_info["task_id"]``, the ``task_id``
column, ``info["task_id"]`` or the rubric's) and score each group together, because only a group
gives CFRR its pass rates. ``trl_reward_fn`` takes the pass vectors from TRL's ``environments``
(the live episodes) when it gets them. OpenRLHF's per-sample ``reward_func`` uses the checklist
score and says so (``extra_logs["per_sample"]``); verl's per-sample ``compute_score`` is a group of
one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from envpipeline.errors import ConfigError
from envpipeline.models.dataset import Rubric, RubricCriterion
from envpipeline.models.task import Criterion, Strict
from envpipeline.rewards.cfrr import grpo_advantages
from envpipeline.rewards.held_at_start import held_rewards
from envpipeline.rewards.modes import get_reward_mode, reward_modes

Mode = Literal["cfrr", "checklist", "binary"]
DATA_SOURCE_PREFIX = "envpipeline/"


class GroupScores(Strict):
    """Rewards, GRPO advantages and per-criterion pass rates of one rollout group."""

    rewards: list[float]
    advantages: list[float]
    per_criterion_pass_rate: list[float]


def score_group(
    pass_matrix: Sequence[Sequence[bool]],
    criteria_weights: Sequence[float] | None = None,
    mode: Mode = "cfrr",
    floor: float = 0.1,
    partial_scale: float = 1.0,
    eps: float = 1e-6,
    held_at_start: Sequence[bool] | None = None,
) -> GroupScores:
    """Score a rollout group from its pass matrix (rows: rollouts, columns: criteria).

    `held_at_start` (one flag per criterion, `Rubric.held_at_start`): criteria the task's initial
    state already meets earn no partial credit and void it when broken
    (`envpipeline.rewards.held_at_start`), so doing nothing scores 0.0.
    """
    if not pass_matrix or not pass_matrix[0]:
        raise ValueError("a rollout group needs at least one rollout and one criterion")
    width = len(pass_matrix[0])
    if any(len(row) != width for row in pass_matrix):
        raise ValueError("every rollout must report the same criteria")
    if criteria_weights is not None and (len(criteria_weights) != width or min(criteria_weights) <= 0):
        raise ValueError("criteria_weights needs one positive weight per criterion")
    if held_at_start is not None and len(held_at_start) != width:
        raise ValueError("held_at_start needs one flag per criterion")
    rates = [sum(bool(row[c]) for row in pass_matrix) / len(pass_matrix) for c in range(width)]
    if mode not in reward_modes():
        raise ValueError(f"unknown mode {mode!r}; choose {', '.join(reward_modes())}")
    rewards = held_rewards(
        get_reward_mode(mode),
        pass_matrix,
        criteria_weights,
        held_at_start or [False] * width,
        floor,
        partial_scale,
    )
    return GroupScores(
        rewards=rewards, advantages=grpo_advantages(rewards, eps=eps), per_criterion_pass_rate=rates
    )


def _loads(value: Any) -> Any:
    if isinstance(value, str | bytes):
        return json.loads(value) if value else None
    return value


def parse_rubric(ground_truth: Any) -> Rubric:
    """The rubric carried by a ground truth / answer / label (JSON string or dict)."""
    data = _loads(ground_truth)
    if isinstance(data, Mapping) and "rubric" in data and "criteria" not in data:
        data = _loads(data["rubric"])
    return Rubric.model_validate(data)


def completion_text(completion: Any) -> str:
    """The final reply: a string as is; for chat messages, the last assistant message's text."""
    if completion is None:
        return ""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return str(completion.get("content") or "")
    for message in reversed(list(completion)):
        if isinstance(message, Mapping) and message.get("role") == "assistant" and message.get("content"):
            return str(message["content"])
    return ""


def completion_passes(
    rubric: Rubric,
    text: str,
    final_state: Any = None,
    criteria_passed: Mapping[str, bool] | None = None,
) -> list[bool]:
    """The criteria pass vector of one completion (see the module docstring for what is checkable)."""
    from envpipeline.rubric import evaluate_criterion

    states = _loads(final_state) or None
    reported = _loads(criteria_passed) or {}
    passes = []
    for criterion in rubric.criteria:
        if not _scorable(rubric, criterion, states, reported):
            passes.append(False)
        elif criterion.id in reported:
            passes.append(bool(reported[criterion.id]))
        elif criterion.check == "text" and rubric.family == "compose" and criterion.spec:
            passes.append(evaluate_criterion(Criterion.model_validate_json(criterion.spec), {}, text))
        elif criterion.check == "text" and criterion.expected_text is not None:
            passes.append(criterion.expected_text.lower() in text.lower())
        else:  # a composed state criterion, on the final state
            passes.append(
                evaluate_criterion(Criterion.model_validate_json(criterion.spec), states or {}, text)
            )
    return passes


def evidence_held(rubric: Rubric, final_state: Any = None, criteria_passed: Any = None) -> list[bool]:
    """`Rubric.held_at_start` for the criteria this evidence can check, False for the others."""
    states = _loads(final_state) or None
    reported = _loads(criteria_passed) or {}
    return [c.held_at_start and _scorable(rubric, c, states, reported) for c in rubric.criteria]


def _scorable(rubric: Rubric, criterion: RubricCriterion, states: Any, reported: Mapping[str, Any]) -> bool:
    """Whether the evidence decides `criterion` (the module docstring's cases 1-3)."""
    if criterion.id in reported:
        return True
    if criterion.check == "text":
        return (rubric.family == "compose" and bool(criterion.spec)) or criterion.expected_text is not None
    return criterion.check == "state" and rubric.family == "compose" and isinstance(states, Mapping)


def _evidence(source: Any, key: str) -> Any:
    if isinstance(source, Mapping):
        return source.get(key)
    return None


#: (task id, criteria weights, held at start as the evidence checks it, passes) of one sample
Sample = tuple[str, list[float] | None, list[bool], list[bool]]


def _score_samples(samples: list[Sample], mode: Mode) -> list[tuple[float, float]]:
    """(reward, advantage) of each sample, one group per task id; a criterion counts as held at the
    start only where every sample of its group checks it (`evidence_held`)."""
    groups: dict[str, list[int]] = {}
    for i, (task_id, _, _, _) in enumerate(samples):
        groups.setdefault(task_id, []).append(i)
    out: list[tuple[float, float]] = [(0.0, 0.0)] * len(samples)
    for members in groups.values():
        weights = samples[members[0]][1]
        held = [all(flags) for flags in zip(*(samples[i][2] for i in members))]
        scores = score_group([samples[i][3] for i in members], weights, mode, held_at_start=held)
        for i, reward, advantage in zip(members, scores.rewards, scores.advantages):
            out[i] = (reward, advantage)
    return out


def _result(reward: float, advantage: float, passes: list[bool]) -> dict[str, float]:
    return {
        "score": reward,
        "advantage": advantage,
        "criteria_passed": float(sum(passes)),
        "criteria_total": float(len(passes)),
        "full_pass": float(all(passes)),
    }


def verl_compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    **kw: Any,
) -> dict[str, float]:
    """verl per-sample reward: a group of one; ``extra_info``/kw may carry final_state, criteria_passed."""
    rubric = parse_rubric(ground_truth)
    state = _evidence(extra_info, "final_state") or kw.get("final_state")
    reported = _evidence(extra_info, "criteria_passed") or kw.get("criteria_passed")
    passes = completion_passes(rubric, completion_text(solution_str), state, reported)
    held = evidence_held(rubric, state, reported)
    scores = score_group([passes], rubric.weights(), kw.get("mode", "cfrr"), held_at_start=held)
    return _result(scores.rewards[0], scores.advantages[0], passes)


def verl_batch_compute_score(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Mapping[str, Any] | None],
    **kw: Any,
) -> list[dict[str, float]]:
    """verl batch reward manager: regroup by ``extra_info["task_id"]`` and apply CFRR per group."""
    samples: list[Sample] = []
    for text, truth, info in zip(solution_strs, ground_truths, extra_infos):
        rubric = parse_rubric(truth)
        state, reported = _evidence(info, "final_state"), _evidence(info, "criteria_passed")
        passes = completion_passes(rubric, completion_text(text), state, reported)
        task_id = str(_evidence(info, "task_id") or rubric.task_id)
        samples.append((task_id, rubric.weights(), evidence_held(rubric, state, reported), passes))
    scored = _score_samples(samples, kw.get("mode", "cfrr"))
    return [_result(r, a, s[3]) for (r, a), s in zip(scored, samples)]


def _column(kwargs: Mapping[str, Any], name: str, n: int) -> list[Any]:
    values = kwargs.get(name)
    return list(values) if values is not None else [None] * n


def _episode_of(environment: Any) -> Any:
    """The live `Episode` of a trainer environment (our TRL classes), or None."""
    from envpipeline.trainers.episode import Episode

    if isinstance(environment, Episode):
        return environment
    try:
        episode = getattr(environment, "episode", None)
    except ConfigError:  # an environment that was never reset
        return None
    return episode if isinstance(episode, Episode) else None


def trl_reward_fn(
    prompts: Sequence[Any],
    completions: Sequence[Any],
    completion_ids: Sequence[Any] | None = None,
    **kwargs: Any,
) -> list[float | None]:
    """TRL GRPO reward, scoring each group of rollouts of one task together (CFRR by default).

    With ``environment_factory``, TRL passes ``environments`` (one live environment per
    completion, ``GRPOTrainer._calculate_rewards`` in trl 1.16): each rollout's pass vector is then
    its episode's ``criteria_passed()`` — the state it left and the answer it submitted. Without
    one, the rubric comes from the ``answer`` column and the evidence from ``final_state`` /
    ``criteria_passed`` columns or the completion text. ``None`` for rows with neither. On several
    processes each sees only its slice, so groups are those visible in the slice.
    """
    n = len(completions)
    answers, task_ids = _column(kwargs, "answer", n), _column(kwargs, "task_id", n)
    states, reported = _column(kwargs, "final_state", n), _column(kwargs, "criteria_passed", n)
    environments = _column(kwargs, "environments", n)
    samples: list[Sample] = []
    positions = []
    for i, completion in enumerate(completions):
        episode = _episode_of(environments[i])
        rubric = parse_rubric(answers[i]) if answers[i] is not None else None
        if episode is not None:
            passes = episode.criteria_passed()
            weights = rubric.weights() if rubric is not None and len(rubric.criteria) == len(passes) else None
            held = episode.held_at_start() or [False] * len(passes)
            samples.append((str(task_ids[i] or episode.task_id), weights, held, passes))
        elif rubric is not None:
            passes = completion_passes(rubric, completion_text(completion), states[i], reported[i])
            held = evidence_held(rubric, states[i], reported[i])
            samples.append((str(task_ids[i] or rubric.task_id), rubric.weights(), held, passes))
        else:
            continue
        positions.append(i)
    out: list[float | None] = [None] * n
    for i, (reward, _) in zip(positions, _score_samples(samples, kwargs.get("mode", "cfrr"))):
        out[i] = reward
    return out


def verifiers_group_reward(
    completions: Sequence[Any],
    infos: Sequence[Any] | None = None,
    answers: Sequence[Any] | None = None,
    states: Sequence[Any] | None = None,
    **kwargs: Any,
) -> list[float]:
    """CFRR over one rollout group (plural arguments): rubric from ``answers`` or ``infos[i]["rubric"]``.

    This is the group-reward shape of verifiers ≤ 0.3 (``Rubric`` group functions). verifiers 0.4
    (``verifiers.v1``) has no group hook — each trace is scored alone by its task — so its adapter
    is `envpipeline.trainers.verifiers_env` (per-trace checklist from the live environment); use
    this function where a caller does hold a group (e.g. over finished 0.4 traces of one task).
    Each ``state`` may carry ``criteria_passed`` / ``final_state``, or the ``evidence`` our 0.4
    toolset records (`envpipeline.trainers.adapter_common.episode_evidence`).
    """
    n = len(completions)
    infos, answers, states = (
        list(infos or [None] * n),
        list(answers or [None] * n),
        list(states or [None] * n),
    )
    samples: list[Sample] = []
    for completion, info, answer, state in zip(completions, infos, answers, states):
        info = _loads(info) or {}
        rubric = parse_rubric(answer if answer else info["rubric"])
        evidence = _evidence(state, "evidence") or {}
        final = _evidence(state, "final_state") or info.get("final_state")
        reported = (
            evidence.get("criteria_passed")
            or _evidence(state, "criteria_passed")
            or info.get("criteria_passed")
        )
        text = evidence.get("answer") or completion_text(completion)
        passes = completion_passes(rubric, text, final, reported)
        held = evidence_held(rubric, final, reported)
        samples.append((str(info.get("task_id") or rubric.task_id), rubric.weights(), held, passes))
    return [r for r, _ in _score_samples(samples, kwargs.get("mode", "cfrr"))]


def openrlhf_reward_func(
    queries: Sequence[str], prompts: Sequence[str], labels: Sequence[str]
) -> dict[str, Any]:
    """OpenRLHF remote/custom reward, PER SAMPLE: each sample gets its checklist score.

    OpenRLHF calls ``reward_func`` with whatever samples a worker holds, often one at a time
    (``openrlhf/utils/remote_rm_utils.py`` and the agent path of ``ppo_utils/experience_maker.py``),
    so the samples of one task never arrive together and CFRR's pass rates cannot be computed;
    rather than a silent group of one, the reward is the sample's weighted share of criteria passed
    (``checklist`` mode). ``extra_logs["per_sample"]`` is 1.0 on every sample to say so. The
    response is the query minus its prompt; labels are rubrics; from text alone only text criteria
    are checkable (see the module docstring).

    Returns torch tensors when torch is importable (as OpenRLHF expects), plain lists otherwise.
    """
    rewards, full_pass = [], []
    for query, prompt, label in zip(queries, prompts, labels):
        response = query[len(prompt) :] if query.startswith(prompt) else query
        rubric = parse_rubric(label)
        passes = completion_passes(rubric, response)
        held = evidence_held(rubric)
        rewards.append(score_group([passes], rubric.weights(), "checklist", held_at_start=held).rewards[0])
        full_pass.append(float(all(passes)))
    logs = {"full_pass": full_pass, "per_sample": [1.0] * len(rewards)}
    try:
        import torch  # pyright: ignore[reportMissingImports]  # only where OpenRLHF (and torch) is installed
    except ImportError:
        return {"rewards": rewards, "scores": rewards, "extra_logs": logs}
    tensor = torch.tensor(rewards, dtype=torch.float32)
    return {
        "rewards": tensor,
        "scores": tensor.clone(),
        "extra_logs": {k: torch.tensor(v, dtype=torch.float32) for k, v in logs.items()},
    }


ADAPTERS = {
    "verl": verl_compute_score,
    "verl-batch": verl_batch_compute_score,
    "trl": trl_reward_fn,
    "verifiers": verifiers_group_reward,
    "openrlhf": openrlhf_reward_func,
}

# The names each trainer looks up in a reward file.
compute_score = verl_compute_score
compute_score_batch = verl_batch_compute_score
reward_fn = trl_reward_fn
reward_func = openrlhf_reward_func
