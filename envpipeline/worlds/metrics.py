r"""Metrics of WildAWM worlds and tasks, and the rollout reward.

- Cohen's kappa between two binary raters (the verifier and the judge majority):
  kappa = (p_o - p_e) / (1 - p_e); when p_e = 1 (both raters constant) it is 1.0 if they agree
  everywhere, else 0.0.
- TF-IDF embeddings in numpy (no sklearn): lowercase word tokens, word n-grams (1..2 by default),
  smooth idf = ln((1 + n) / (1 + df)) + 1, sublinear tf off, rows L2-normalized.
- Vendi score: K = X X^T (cosine similarities, K_ii = 1), eigenvalues of K/n, negatives clipped,
  VS = exp(-sum lambda log lambda): 1 for identical items, n for mutually orthogonal ones. For d < n
  the eigenvalues of X^T X / n are used (same non-zero spectrum, cheaper).
- Diversity is reported entity-masked (`diversity_report`: the headline figures after
  `masking.mask_entities`), with the raw figures beside it.
- Nearest-neighbour cosine distance: d_i = 1 - max_{j != i} cos(x_i, x_j); mean, min and the share of
  near-duplicates (d_i < `dup_threshold`).
- Reward of a rollout (documented formula):

      R = success + alpha * checklist + beta * format

  with success = V in {0, 1}, checklist in [0, 1] (weighted partial credit), format in {0, 1} (the
  trajectory is well-formed: `trajectory_well_formed`), alpha = 0.5 and beta = 0.1 by default, so
  R is in [0, 1.6] and any success outranks any failure. GRPO advantages over a task's rollouts come
  from `envpipeline.rewards.cfrr.grpo_advantages`.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from envpipeline.errors import MissingExtraError
from envpipeline.rewards.cfrr import grpo_advantages
from envpipeline.worlds.masking import EntityLexicon, mask_all

try:
    import numpy as np
except ImportError as missing:
    raise MissingExtraError("worlds", missing, needed_by=__name__) from missing

_TOKEN = re.compile(r"[a-z0-9]+(?:[-_.][a-z0-9]+)*")
ALPHA, BETA = 0.5, 0.1
INTERFACE_PREFIXES = ("mcp.", "web.", "cli.")


def cohen_kappa(a: Sequence[bool | int], b: Sequence[bool | int]) -> float:
    """Cohen's kappa of two binary label sequences."""
    if len(a) != len(b) or not a:
        raise ValueError("kappa needs two non-empty sequences of equal length")
    n = len(a)
    x, y = [bool(v) for v in a], [bool(v) for v in b]
    p_o = sum(i == j for i, j in zip(x, y)) / n
    pa, pb = sum(x) / n, sum(y) / n
    p_e = pa * pb + (1 - pa) * (1 - pb)
    if math.isclose(p_e, 1.0):
        return 1.0 if math.isclose(p_o, 1.0) else 0.0
    return (p_o - p_e) / (1 - p_e)


def majority(votes: Sequence[bool | None], tie: bool | None = None) -> bool | None:
    """Majority of the non-abstaining votes; `tie` breaks ties (None: no votes -> None)."""
    cast = [bool(v) for v in votes if v is not None]
    if not cast:
        return None
    yes = sum(cast)
    if yes * 2 == len(cast):
        return tie if tie is not None else cast[0]
    return yes * 2 > len(cast)


def tokens(text: str, ngrams: tuple[int, int] = (1, 2)) -> list[str]:
    """Lowercase word n-grams."""
    words = _TOKEN.findall(text.lower())
    out: list[str] = []
    for n in range(ngrams[0], ngrams[1] + 1):
        out += [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]
    return out


def tfidf(texts: Sequence[str], ngrams: tuple[int, int] = (1, 2)) -> np.ndarray:
    """L2-normalized TF-IDF rows (n x vocabulary) of `texts`."""
    counts = [Counter(tokens(t, ngrams)) for t in texts]
    vocab = sorted({term for c in counts for term in c})
    index = {term: i for i, term in enumerate(vocab)}
    matrix = np.zeros((len(texts), max(len(vocab), 1)))
    for row, c in enumerate(counts):
        for term, tf in c.items():
            matrix[row, index[term]] = tf
    df = (matrix > 0).sum(axis=0)
    idf = np.log((1 + len(texts)) / (1 + df)) + 1.0
    matrix *= idf
    return unit_rows(matrix)


def unit_rows(x: np.ndarray) -> np.ndarray:
    """`x` with every row scaled to length 1 (an all-zero row stays zero)."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1.0, norms)


def cosine_matrix(x: np.ndarray) -> np.ndarray:
    """Pairwise cosine similarity of row vectors (rows normalized here)."""
    unit = unit_rows(x)
    return unit @ unit.T


def cosine_to_last(x: np.ndarray) -> np.ndarray:
    """Cosine similarity of the last row vector to each of the others (rows normalized here):
    the last row of `cosine_matrix` without its diagonal, a matrix-vector product instead of the
    whole matrix."""
    unit = unit_rows(x)
    return unit[:-1] @ unit[-1]


def vendi_score(x: np.ndarray) -> float:
    """Vendi score of row embeddings (cosine kernel): exp of the entropy of eig(K/n)."""
    n = x.shape[0]
    if n == 0:
        return 0.0
    unit = unit_rows(x)
    small = unit.T @ unit / n if unit.shape[1] < n else unit @ unit.T / n
    eig = np.clip(np.linalg.eigvalsh(small), 0.0, None)
    eig = eig[eig > 1e-12]
    return float(np.exp(-np.sum(eig * np.log(eig))))


def nn_cosine(x: np.ndarray, dup_threshold: float = 0.05) -> dict[str, float]:
    """Nearest-neighbour cosine distance: mean, min and near-duplicate share (n >= 2)."""
    n = x.shape[0]
    if n < 2:
        return {"mean": 0.0, "min": 0.0, "near_duplicate_share": 0.0, "n": n}
    sims = cosine_matrix(x)
    np.fill_diagonal(sims, -np.inf)
    dist = 1.0 - sims.max(axis=1)
    return {
        "mean": round(max(0.0, float(dist.mean())), 4),
        "min": round(max(0.0, float(dist.min())), 4),
        "near_duplicate_share": round(float((dist < dup_threshold).mean()), 4),
        "n": n,
    }


def diversity(texts: Sequence[str]) -> dict[str, Any]:
    """Vendi and NN cosine distance of texts under TF-IDF."""
    if not texts:
        return {"n": 0, "vendi": 0.0, "nn_cosine": nn_cosine(np.zeros((0, 1)))}
    x = tfidf(texts)
    return {"n": len(texts), "vendi": round(vendi_score(x), 4), "nn_cosine": nn_cosine(x)}


def diversity_report(texts: Sequence[str], lexicon: EntityLexicon | None = None) -> dict[str, Any]:
    """Diversity with entity masking as the headline: ``vendi`` and ``nn_cosine`` of the texts
    after `masking.mask_entities` (names, e-mails, products, ids, dates, numbers -> their types),
    ``vendi_raw`` / ``nn_cosine_raw`` of the texts as written."""
    masked = diversity(mask_all(texts, lexicon))
    raw = diversity(texts)
    return {
        "n": masked["n"],
        "masked": True,
        "vendi": masked["vendi"],
        "nn_cosine": masked["nn_cosine"],
        "vendi_raw": raw["vendi"],
        "nn_cosine_raw": raw["nn_cosine"],
    }


def trajectory_well_formed(messages: Sequence[dict[str, Any]]) -> bool:
    """Format check: system+user first, every tool call is interface-named with JSON arguments and
    answered by exactly one tool message, and the trajectory ends with a non-empty assistant answer."""
    if len(messages) < 3 or [m.get("role") for m in messages[:2]] != ["system", "user"]:
        return False
    pending: set[str] = set()
    for m in messages[2:]:
        if m.get("role") == "assistant":
            for call in m.get("tool_calls") or []:
                name = call.get("function", {}).get("name", "")
                try:
                    json.loads(call["function"]["arguments"])
                except (KeyError, TypeError, ValueError):
                    return False
                if not name.startswith(INTERFACE_PREFIXES):
                    return False
                pending.add(call["id"])
        elif m.get("role") == "tool":
            if m.get("tool_call_id") not in pending:
                return False
            pending.discard(m["tool_call_id"])
        else:
            return False
    last = messages[-1]
    return (
        not pending
        and last.get("role") == "assistant"
        and bool((last.get("content") or "").strip())
        and not last.get("tool_calls")
    )


def reward(
    success: int, checklist: float, format_ok: bool, alpha: float = ALPHA, beta: float = BETA
) -> float:
    """R = success + alpha * checklist + beta * format."""
    return round(float(success) + alpha * float(checklist) + beta * float(bool(format_ok)), 4)


def group_rewards(rows: Sequence[tuple[int, float, bool]]) -> tuple[list[float], list[float]]:
    """(rewards, GRPO advantages) of one task's rollouts given (V, checklist, format) each."""
    rewards = [reward(v, c, f) for v, c, f in rows]
    return rewards, [round(a, 4) for a in grpo_advantages(rewards)]
