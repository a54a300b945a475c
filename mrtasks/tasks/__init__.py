"""Task constructors: a trajectory in, one seeded, deterministic training example out.

Task names double as dataset config names and as the value of every row's `task` column,
which the `process` reward dispatches on.
"""

MASKED_FILL = "masked_then_fill"
STEP_ORDER = "step_reordering"
OUTCOME = "outcome"
TASKS: tuple[str, ...] = (MASKED_FILL, STEP_ORDER, OUTCOME)

MASK_TOKEN = "<formula_masked>"

from mrtasks.tasks.base import NotEligible  # noqa: E402
from mrtasks.tasks.masked_fill import MaskedFillConfig, make_masked_fill  # noqa: E402
from mrtasks.tasks.outcome import make_outcome  # noqa: E402
from mrtasks.tasks.step_order import StepOrderConfig, make_step_order  # noqa: E402

__all__ = [
    "MASKED_FILL",
    "STEP_ORDER",
    "OUTCOME",
    "TASKS",
    "MASK_TOKEN",
    "NotEligible",
    "MaskedFillConfig",
    "StepOrderConfig",
    "make_masked_fill",
    "make_step_order",
    "make_outcome",
]
