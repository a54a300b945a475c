"""Grading: each completion scored by the project's `outcome` reward (MathRuler equivalence).

Evaluation and training share one grader, so a Pass@k number means the same thing as the
Stage II reward. A sample counts as correct when its reward is 1.0. Evaluation gives the grader
a generous per-completion time bound (`configure_grader`), recorded in the summary with the
number of completions that hit it: training's tight bound would count a slow-but-correct
answer as wrong on a busy node.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

from mrtasks.tasks import OUTCOME

REWARD_NAME = OUTCOME
CORRECT_THRESHOLD = 1.0
_SETTINGS: dict[str, Any] = {"think_prefilled": False, "timeout_s": None, "timeouts_at_start": 0}


def configure_grader(*, timeout: float | None = None, think_prefilled: bool = False) -> None:
    """Set the per-completion time bound of the reward pool and whether the prompt opened `<think>`."""
    from mrtasks.mathcheck import configure_pool, get_pool

    pool = get_pool()
    if timeout is not None and pool.timeout != timeout:
        pool = configure_pool(workers=pool.num_workers, timeout=timeout)
    _SETTINGS.update(think_prefilled=think_prefilled, timeout_s=pool.timeout, timeouts_at_start=pool.stats.timeouts)


def _reward_fn():
    from mrtasks.rewards import get_reward

    return get_reward(REWARD_NAME, think_prefilled=_SETTINGS["think_prefilled"])


def grade(completions: list[str], answer: str) -> list[float]:
    """Rewards in [0, 1] for the completions of one problem against its reference answer."""
    if not completions:
        return []
    k = len(completions)
    rewards = _reward_fn()(completions, answer=[answer] * k, task=[OUTCOME] * k)
    if len(rewards) != k or any(r is None for r in rewards):
        raise RuntimeError(f"the {REWARD_NAME!r} reward returned {rewards!r} for {k} completions")
    return [float(r) for r in rewards]


def is_correct(reward: float) -> bool:
    return reward >= CORRECT_THRESHOLD


def extract_prediction(completion: str) -> str | None:
    """The answer the grader reads (last `\\boxed{}` after `</think>`), kept in the samples for inspection."""
    from mrtasks.rewards import extract_answer

    return extract_answer(completion)


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def grader_info() -> dict[str, Any]:
    """What the summary records about the grader, so a score can be traced to its code."""
    import mrtasks
    from mrtasks.mathcheck import get_pool

    pool = get_pool()
    return {
        "reward": f"mrtasks.rewards:{REWARD_NAME}",
        "correct_threshold": CORRECT_THRESHOLD,
        "think_prefilled": _SETTINGS["think_prefilled"],
        "timeout_s": pool.timeout,
        "timeouts": pool.stats.timeouts - _SETTINGS["timeouts_at_start"],
        "mrtasks": mrtasks.__version__,
        "mathruler": _version("mathruler"),
        "sympy": _version("sympy"),
    }
