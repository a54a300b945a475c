"""The math checker: is an answer or a formula the same mathematical object as the reference?

The bottom layer of `mrtasks` above the leaf modules: rewards, task constructors, curation and
evaluation import it, and it imports none of them. One module per concern, each with its policy
in its docstring (a new notation rule has one home):

    latex       braces, boxes, top-level splits, wrappers
    notation    notation models write (Unicode, plain-text and Python notation, e-notation,
                repeating decimals, mixed numbers, base numerals) rewritten into LaTeX
    normalize   answer text normalization (units, words, thousands separators, choice letters)
    prose       the value a one-sentence answer states
    answer      the `Answer` structure, `parse_answer`, labels and the values they stand for
    expr        the safe expression evaluator (exact rationals, probe points; never `eval`)
    relations   the relation normal form (`lhs - rhs` up to a factor), `numeric_truth`
    intervals   one-variable conditions, unions and intervals as point sets
    solutions   solution sets found numerically (equations by real roots, non-linear inequalities)
    tolerance   decimal tolerance and the `\\approx` policy
    markup      presentational markup (markers, connectives, styling, tags, trailing prose) and the
                rule that removes it; full-width digits; script braces
    grammar     `in_grammar`: is a reference within the checker's grammar (then only the checker pays)
    compare     structure comparison, unordered matching
    verdict     `Verdict`, `judge`, `judge_batch`, `judge_in_process`, `is_equal`, `equal_batch`
    slow        the MathRuler/sympy tier and what text may reach it
    sandbox     the time-bounded worker pool that runs the slow tier (`_worker` is its entry point)
    theorems    the theorem-name lexicon with aliases, `theorem_names_equal`, `theorem_key`
    cache       bounded memoization of short texts

    from mrtasks.mathcheck import Verdict, judge, judge_batch
    judge("\\frac{1}{2}", "0.5")                              # Verdict.EQUAL (final answers)
    judge_batch([("y = 2x", "2x = y")], strip_lhs=False)     # [Verdict.EQUAL] (formulas)

The text normalizer is `mrtasks.mathcheck.normalize.normalize` (not re-exported here, so that the
name `mrtasks.mathcheck.normalize` stays the module).
"""

from mrtasks.mathcheck.answer import MAX_ANSWER_CHARS, Answer, parse_answer
from mrtasks.mathcheck.grammar import in_grammar
from mrtasks.mathcheck.latex import final_box_parts, last_boxed, split_top_level, strip_wrappers
from mrtasks.mathcheck.markup import strip_markup
from mrtasks.mathcheck.relations import numeric_truth
from mrtasks.mathcheck.sandbox import OFFLINE_TIMEOUT_S, configure_pool, get_pool
from mrtasks.mathcheck.slow import safe_for_sympy
from mrtasks.mathcheck.theorems import canonical_theorem, theorem_key, theorem_names_equal
from mrtasks.mathcheck.verdict import Verdict, equal_batch, is_equal, judge, judge_batch, judge_in_process

__all__ = [
    "Verdict",
    "judge",
    "judge_batch",
    "judge_in_process",
    "is_equal",
    "equal_batch",
    "Answer",
    "parse_answer",
    "MAX_ANSWER_CHARS",
    "last_boxed",
    "final_box_parts",
    "split_top_level",
    "strip_wrappers",
    "numeric_truth",
    "in_grammar",
    "strip_markup",
    "theorem_names_equal",
    "canonical_theorem",
    "theorem_key",
    "safe_for_sympy",
    "configure_pool",
    "get_pool",
    "OFFLINE_TIMEOUT_S",
]
