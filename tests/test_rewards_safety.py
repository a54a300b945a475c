"""Rewards on hostile input: always a float in [0, 1], never an exception, a hang or `eval`."""

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mrtasks.mathcheck.sandbox import TimedPool, echo_after
from mrtasks.rewards import get_reward
from mrtasks.tasks import MASKED_THEN_FILL, OUTCOME, STEP_REORDERING

NAMES = ["masked_then_fill", "step_reordering", "outcome", "process", "format"]
COLUMNS = dict(
    masks=[["x^2 + 1", "\\frac{1}{2}", "A = \\texttt{0x81010100}"]] * 3,
    scored=[[0, 2]] * 3,
    order=[[2, 0, 1]] * 3,
    answer=["\\frac{1}{2}"] * 3,
    task=[MASKED_THEN_FILL, STEP_REORDERING, OUTCOME],
)

PATHOLOGICAL = [
    "\\boxed{9^{9^{9^{9}}}}",
    "\\boxed{10**10**10}",
    "\\boxed{" + "9" * 5000 + "^" + "9" * 5000 + "}",
    "\\boxed{100000000!}",
    "\\boxed{\\binom{10^{9}}{5 \\cdot 10^{8}}}",
    "x" * 100_000 + "\\boxed{1/2}",
    "\\boxed{" * 20_000,
    "}" * 50_000 + "\\boxed{" + "{" * 50_000,
    "\\boxed{__import__('os').system('true')}",
    "\\boxed{().__class__.__bases__[0].__subclasses__()}",
    "\\boxed{lambda: 0; \\frac12}",
    "\\boxed{\x00\x00\\frac{1}{2}\x00}",
    "\\boxed{\ud800\udfff}",
    "\\boxed{" + "(" * 3000 + "1" + ")" * 3000 + "}",
    "\\boxed{" + "\\sqrt{" * 2000 + "2" + "}" * 2000 + "}",
    "\\boxed{" + "; ".join(["x"] * 10_000) + "}",
    "\\boxed{" + ", ".join(map(str, range(10_000))) + "}",
    "\\boxed{" + "1" * 100_000 + "}",
    "\\boxed{\\frac{1}{0}}",
    "<think>" * 1000 + "</think>" * 1000,
    [{"role": "assistant", "content": None}],
    [{"role": "assistant"}],
    None,
    12345,
]


def check(scores, n):
    assert len(scores) == n
    assert all(s is None or (isinstance(s, float) and 0.0 <= s <= 1.0) for s in scores), scores


@pytest.mark.parametrize("name", NAMES)
def test_pathological_completions_score_quickly_and_in_range(name, tmp_path):
    fn = get_reward(name)
    for bad in PATHOLOGICAL:
        start = time.perf_counter()
        check(fn([bad] * 3, **COLUMNS), 3)
        assert time.perf_counter() - start < 3.0, (name, str(bad)[:80])


def test_completion_text_is_never_executed(tmp_path):
    marker = tmp_path / "pwned"
    payloads = [f"\\boxed{{__import__('os').system('touch {marker}')}}", f"\\boxed{{open('{marker}', 'w')}}"]
    for name in NAMES:
        get_reward(name)(payloads, answer=["0"] * 2, masks=[["x"]] * 2, order=[[0, 1]] * 2)
    assert not marker.exists()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(alphabet=st.characters(codec=None), max_size=300), min_size=3, max_size=3))
def test_fuzz_arbitrary_text(texts):
    for name in NAMES:
        check(get_reward(name)(texts, **COLUMNS), 3)


TOKENS = list("0123456789xyz+-*/^_{}()[]\\,;.=<> !|") + ["\\frac", "\\sqrt", "\\pi", "\\boxed{", "\\to", "</think>"]
LATEXISH = st.lists(st.sampled_from(TOKENS), max_size=40).map("".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LATEXISH.map(lambda s: "\\boxed{" + s + "}"), min_size=3, max_size=3), LATEXISH)
def test_fuzz_latex_like_answers(texts, reference):
    for name in NAMES:
        check(get_reward(name)(texts, **{**COLUMNS, "answer": [reference] * 3, "masks": [[reference]] * 3}), 3)


def test_pool_kills_and_replaces_a_worker_that_overruns():
    pool = TimedPool(workers=2, timeout=0.5)
    try:
        start = time.perf_counter()
        pool.start()
        out = pool.map(echo_after, [(0.01, "a"), (30.0, "b"), (0.02, "c"), (0.03, "d")], default="timeout")
        assert out == ["a", "timeout", "c", "d"]
        assert time.perf_counter() - start < 10
        assert pool.stats.timeouts == 1 and pool.stats.restarts == 1
        assert pool.map(echo_after, [(0.0, "e")], default="timeout") == ["e"]  # the replacement works
    finally:
        pool.close()


def test_prestart_spawns_workers_without_waiting_and_map_uses_them():
    """The build spawns its checker workers first thing (their sympy start overlaps the build's own
    work); the first map waits for them and spawns no more."""
    pool = TimedPool(workers=1, timeout=5.0)
    try:
        start = time.perf_counter()
        pool.prestart()
        assert time.perf_counter() - start < 0.5 and len(pool._workers) == 1 and not pool._workers[0].ready
        first = pool._workers[0].process.pid
        pool.prestart()  # idempotent
        assert pool.map(echo_after, [(0.0, "a"), (0.0, "b")], default="timeout") == ["a", "b"]
        assert [w.process.pid for w in pool._workers] == [first] and pool.stats.restarts == 0
    finally:
        pool.close()
    inline = TimedPool(workers=0)
    inline.prestart()
    assert inline._workers == [] and inline.map(echo_after, [(0.0, "c")], default=None) == ["c"]


# --- issue 8: one odd row never aborts a batch; the fallback slices any column type ----------

ODD = ["3²", ".", "0x", "1\u00a02", "x⁴+1", "٣", "\u200b", "½", "0x1g", "1e309", "\\frac{.}{.}", "2^{.}"]


@pytest.mark.parametrize("odd", ODD)
def test_expression_tier_raises_only_its_own_error(odd):
    from mrtasks.mathcheck import expr, judge_batch
    from mrtasks.mathcheck.verdict import quick_equal

    for pred, ref in [(odd, "2"), ("2", odd), (f"x = {odd}", "x = 2"), (f"[{odd}, 1)", "[0, 1)")]:
        for strip_lhs in (True, False):
            quick_equal(pred, ref, strip_lhs)  # the unguarded tiers: any escape fails here
    try:
        expr.evaluate(expr.parse(odd), {})
    except expr.ExprError:
        pass
    pairs = [(odd, "2"), ("2", odd), (odd, odd), (f"x = {odd}", "x = 2")]
    assert len(judge_batch(pairs, strip_lhs=False)) == len(judge_batch(pairs)) == 4


def test_one_odd_row_is_scored_in_the_same_pass(caplog):
    n = 4096
    masks = [["x^2 + 1", "\\frac{1}{2}"]] * n
    fills = ["\\boxed{x^2 + 1; \\frac{1}{2}}"] * n
    odd_fills, odd_masks = list(fills), list(masks)
    odd_fills[7] = "\\boxed{x^2 + 1; 3²}"  # odd fill: its other mask still earns credit
    odd_masks[9] = ["x^2 + 1", "."]  # a reference mask the parser cannot read
    reward = get_reward("masked_then_fill")
    clean = reward(fills, masks=masks)
    with caplog.at_level("WARNING"):
        scores = reward(odd_fills, masks=odd_masks)
    assert "row by row" not in caplog.text and "failed" not in caplog.text
    assert clean == [1.0] * n
    assert scores[7] == 0.5 and scores[9] == 0.5 and scores[8] == 1.0


def _fails_on_batches():
    from mrtasks.rewards.registry import safe_reward

    @safe_reward
    def picky(completions, answer=None, **kwargs):
        if len(completions) > 1:
            raise RuntimeError("batch path broken")
        return [1.0 if str(completions[0]) == str(answer[0]) else 0.0]

    return picky


def test_row_by_row_fallback_slices_every_column_type():
    import numpy as np
    from datasets import Dataset

    picky = _fails_on_batches()
    completions = ["1", "2", "3"]
    ds = Dataset.from_dict({"answer": ["1", "0", "3"]})
    for answer in (["1", "0", "3"], ("1", "0", "3"), np.array(["1", "0", "3"]), ds["answer"]):
        assert picky(completions, answer=answer) == [1.0, 0.0, 1.0], type(answer)


def test_misaligned_column_is_one_clear_error():
    from mrtasks.rewards.registry import ColumnLengthError

    for name in ("outcome", "masked_then_fill", "step_reordering"):
        with pytest.raises(ValueError, match="'answer'|'masks'|'order'") as err:
            get_reward(name)(["\\boxed{1}"] * 3, answer=["1"] * 2, masks=[["x"]] * 2, order=[[0, 1]] * 2)
        assert isinstance(err.value, ColumnLengthError)
    with pytest.raises(ColumnLengthError, match="'answer'"):
        _fails_on_batches()(["1", "2"], answer=["1"])


RELATIONAL = st.lists(
    st.sampled_from(
        TOKENS
        + ["\\le", "\\geq", "\\approx", "\\cup", "\\pm", "\\{", "\\}", "\\infty", "\\text{ or }", "|", ":", "0.5", "1,000", "\\in", "%"]
    ),
    max_size=30,
).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(RELATIONAL, RELATIONAL)
def test_fuzz_unguarded_tiers_never_raise(pred, ref):
    """The in-process tiers themselves (not only the batch guard) decide or abstain, never raise."""
    from mrtasks.mathcheck.verdict import quick_equal

    for strip_lhs in (True, False):
        assert quick_equal(pred, ref, strip_lhs) in (True, False, None)
