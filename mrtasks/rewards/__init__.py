"""Reward functions for MR-RLVR, in TRL's format: `f(completions, **columns) -> list[float | None]`.

    from mrtasks.rewards import get_reward, list_rewards
    reward_funcs = [get_reward("masked_then_fill")]  # Stage I, one task per run
    reward_funcs = [get_reward("process")]           # any mix of tasks (dispatch on `task`)
    reward_funcs = [get_reward("outcome")]           # Stage II

Each task's reward carries the task's name (`masked_then_fill`, `step_reordering`, `outcome`;
the older `mask_fill` and `step_order` still resolve), plus `process` and `format`.
Every function accepts string or chat completions, returns floats in [0, 1] (None for rows
of another task), never raises on any text and bounds the time spent per item.
"""

from mrtasks.rewards.registry import RewardFunc, get_reward, list_rewards, register  # noqa: I001
from mrtasks.rewards.mask_fill import mask_fill_reward
from mrtasks.rewards.step_order import step_order_reward
from mrtasks.rewards.outcome import outcome_reward
from mrtasks.rewards.error_correction import error_correction_reward
from mrtasks.rewards.process import process_reward
from mrtasks.rewards.format import format_reward
from mrtasks.mathcheck import is_equal
from mrtasks.rewards.parsing import extract_answer

__all__ = [
    "RewardFunc",
    "register",
    "get_reward",
    "list_rewards",
    "mask_fill_reward",
    "step_order_reward",
    "outcome_reward",
    "error_correction_reward",
    "process_reward",
    "format_reward",
    "is_equal",
    "extract_answer",
]
