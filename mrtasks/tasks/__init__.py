"""The tasks: a trajectory in, one seeded, deterministic training example out.

Every task is a `TaskSpec` in the registry (`get_task`, `list_tasks`). A task's name is its
dataset config name, its rows' `task` column and its reward's name. Adding a task means one
module here (its constructor and spec), its prompt, its reward and its tests.
"""

MASKED_THEN_FILL = "masked_then_fill"
STEP_REORDERING = "step_reordering"
OUTCOME = "outcome"

MASK_TOKEN = "<formula_masked>"

from mrtasks.tasks.base import NotEligible  # noqa: E402
from mrtasks.tasks.error_correction import ERROR_CORRECTION, ErrorCorrectionConfig, make_error_correction  # noqa: E402
from mrtasks.tasks.masked_then_fill import MaskedThenFillConfig, make_masked_then_fill  # noqa: E402
from mrtasks.tasks.outcome import OutcomeConfig, make_outcome  # noqa: E402
from mrtasks.tasks.registry import TaskSpec, get_task, list_tasks, register_task  # noqa: E402
from mrtasks.tasks.step_reordering import StepReorderingConfig, make_step_reordering  # noqa: E402
from mrtasks.trajectory import TRAJECTORIES  # noqa: E402

__all__ = [
    "MASKED_THEN_FILL",
    "STEP_REORDERING",
    "OUTCOME",
    "ERROR_CORRECTION",
    "TRAJECTORIES",
    "MASK_TOKEN",
    "NotEligible",
    "TaskSpec",
    "get_task",
    "list_tasks",
    "register_task",
    "MaskedThenFillConfig",
    "StepReorderingConfig",
    "OutcomeConfig",
    "ErrorCorrectionConfig",
    "make_masked_then_fill",
    "make_step_reordering",
    "make_outcome",
    "make_error_correction",
]
