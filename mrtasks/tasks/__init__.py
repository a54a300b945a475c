"""The tasks: a trajectory in, one seeded, deterministic training example out.

Every task is a `TaskSpec` in the registry (`get_task`, `list_tasks`). A task's name is its
dataset config name, its rows' `task` column and its reward's name. Adding a task means one
module here (its constructor and spec), its prompt, its reward and its tests.
"""

from mrtasks.tasks.base import NotEligible
from mrtasks.tasks.error_correction import ERROR_CORRECTION, ErrorCorrectionConfig, make_error_correction
from mrtasks.tasks.masked_then_fill import MASK_TOKEN, MASKED_THEN_FILL, MaskedThenFillConfig, make_masked_then_fill
from mrtasks.tasks.outcome import OUTCOME, OutcomeConfig, make_outcome
from mrtasks.tasks.registry import TaskSpec, get_task, list_tasks, register_task
from mrtasks.tasks.step_reordering import STEP_REORDERING, StepReorderingConfig, make_step_reordering
from mrtasks.trajectory import TRAJECTORIES

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
