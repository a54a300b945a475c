"""The offline, deterministic annotator: formulas from LaTeX math spans, steps from text layout.

One module per concern, each with its policy in its docstring:

    spans       where the math is: math spans, align rows, figures and code (`find_math_spans`)
    junk        what a formula must look like to be maskable (`junk_reason`)
    answers     the final answer: the contents of `\\boxed{}` (`boxed_spans`)
    context     what a formula does where it stands: bookkeeping or evidence for ranking (`role`)
    candidates  every formula-like span, cleaned, classified, merged (`find_candidates`)
    ranking     which candidates are offered as maskable, most important first (`extract_formulas`)
    steps       one logical move per step (`split_steps`)
    config      `HeuristicConfig`, the knobs (the defaults are what the build uses)
    annotator   `HeuristicAnnotator`

Theorem names come from the checker's lexicon (`mrtasks.mathcheck.theorems`).
`python -m mrtasks.curate.annotator_bench` scores this annotator against hand labels.
"""

from mrtasks.curate.heuristic.annotator import HeuristicAnnotator
from mrtasks.curate.heuristic.answers import boxed_spans
from mrtasks.curate.heuristic.candidates import Candidate, find_candidates
from mrtasks.curate.heuristic.config import HeuristicConfig
from mrtasks.curate.heuristic.context import BOOKKEEPING, role
from mrtasks.curate.heuristic.junk import JUNK_REASONS, junk_reason, significant
from mrtasks.curate.heuristic.ranking import extract_formulas, importance
from mrtasks.curate.heuristic.spans import MathSpan, find_math_spans
from mrtasks.curate.heuristic.steps import split_steps

__all__ = [
    "BOOKKEEPING",
    "HeuristicAnnotator",
    "HeuristicConfig",
    "Candidate",
    "MathSpan",
    "JUNK_REASONS",
    "boxed_spans",
    "extract_formulas",
    "find_candidates",
    "find_math_spans",
    "importance",
    "junk_reason",
    "role",
    "significant",
    "split_steps",
]
