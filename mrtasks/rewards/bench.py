"""Throughput of the rewards on one GRPO step's worth of realistic rollouts.

    python -m mrtasks.rewards.bench --answers ../shared/data/benchmarks/math500.jsonl

Builds N rollouts (reasoning text with LaTeX ending in a boxed answer: correct, equivalent but
written differently, wrong, missing, pathological) from the reference answers in a JSONL file,
scores them with `outcome`, `step_order` and `mask_fill` (7 masks per row), and prints
completions/s and the slowest single item for each, next to a plain loop over
`mathruler.grader.grade_answer` on the same outcome rollouts. Then it times a batch of 4096
rows with and without one odd row (superscript digits, a lone `.`, `0x`, NBSP in a fill or a
reference mask): the odd batch must be scored in one pass, never row by row.
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from mrtasks.jsonl import BadLine, iter_jsonl
from mrtasks.mathcheck import get_pool, safe_for_sympy
from mrtasks.rewards.mask_fill import mask_fill_reward
from mrtasks.rewards.outcome import outcome_reward
from mrtasks.rewards.parsing import extract_answer
from mrtasks.rewards.step_order import step_order_reward

logger = logging.getLogger(__name__)

FILLER = (
    "Let us set up the problem. We write $f(x) = ax^2 + bx + c$ and note that "
    "\\[ \\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}. \\] Substituting gives $2a + b = 3$, so the "
    "remaining case follows by symmetry. "
)
PATHOLOGICAL = [
    "9^{9^{9^{9}}}", "10**10**10", "__import__('os').system('true')", "\\frac{1}{0}",
    "(" * 200 + "1" + ")" * 200, "x" * 5000, "\\sqrt{" * 100 + "2" + "}" * 100, "1" * 4000,
]  # fmt: skip
MASK_POOL = [
    "x^2 + 2x + 1", "\\frac{n(n+1)}{2}", "a = 3", "\\sqrt{b^2 - 4ac}", "f(x) = 2x + 3",
    "\\int_0^1 x^2 \\, dx = \\frac{1}{3}", "A \\oplus B = C", "|x - 1| < \\epsilon", "\\sin^2 x + \\cos^2 x = 1",
    "2^{10} = 1024", "\\binom{5}{2} = 10", "(x-1)(x+1)", "P(A \\cap B) = P(A)P(B)", "e^{i\\pi} + 1 = 0",
]  # fmt: skip


def variant(answer: str, rng: random.Random) -> str:
    """An equivalent rewriting of a reference answer (or the answer itself)."""
    options = [f"${answer}$", f"\\text{{{answer}}}" if answer.isalpha() else answer, answer.replace("\\frac", "\\dfrac"),
               f"x = {answer}" if "=" not in answer and "," not in answer else answer, f" {answer} ."]  # fmt: skip
    if answer.isdigit():
        options += [answer.zfill(3), f"{answer}.0"]
    return rng.choice(options)


def wrong(answer: str, rng: random.Random) -> str:
    if answer.lstrip("-").isdigit() and len(answer) < 4000:  # Python parses at most 4300 digits
        return str(int(answer) + rng.choice([-1, 1, 10, 100]))
    return rng.choice([answer + "+1", "2" + answer if answer else "2", "-(" + answer + ")", "\\frac{1}{2}"])


def reasoning(rng: random.Random) -> str:
    return FILLER * rng.randint(2, 12)


def outcome_rollouts(answers: Sequence[str], n: int, seed: int) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    completions, refs = [], []
    for i in range(n):
        ref = answers[i // 16 % len(answers)]  # 16 rollouts per prompt, as in GRPO
        kind = rng.random()
        if kind < 0.35:
            box = ref
        elif kind < 0.6:
            box = variant(ref, rng)
        elif kind < 0.9:
            box = wrong(ref, rng)
        elif kind < 0.97:
            box = None
        else:
            box = rng.choice(PATHOLOGICAL)
        tail = "I could not finish." if box is None else f"Therefore the answer is $\\boxed{{{box}}}$."
        completions.append(reasoning(rng) + tail)
        refs.append(ref)
    return completions, refs


def step_rollouts(n: int, seed: int) -> tuple[list[str], list[list[int]]]:
    rng = random.Random(seed)
    completions, orders = [], []
    for _ in range(n):
        k = rng.randint(3, 12)
        order = list(range(k))
        rng.shuffle(order)
        pred = list(order)
        if rng.random() < 0.6:
            i, j = rng.randrange(k), rng.randrange(k)
            pred[i], pred[j] = pred[j], pred[i]
        sep = rng.choice([", ", " \\to ", " -> ", ", Step "])
        box = sep.join(map(str, pred)) if rng.random() > 0.05 else rng.choice(PATHOLOGICAL)
        completions.append(reasoning(rng) + f"The order is \\boxed{{{box}}}")
        orders.append(order)
    return completions, orders


def mask_rollouts(n: int, seed: int, num_masks: int = 7) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)
    completions, masks = [], []
    for _ in range(n):
        refs = rng.sample(MASK_POOL, num_masks)
        fills = []
        for ref in refs:
            r = rng.random()
            fills.append(ref if r < 0.5 else ref.replace(" ", "") if r < 0.6 else rng.choice(MASK_POOL)
                         if r < 0.95 else rng.choice(PATHOLOGICAL))  # fmt: skip
        completions.append(reasoning(rng) + "\\boxed{" + "; ".join(fills) + "}")
        masks.append(refs)
    return completions, masks


def timed(fn: Callable[..., list], completions: list, chunk: int, **columns: list) -> tuple[float, float, list]:
    """Total seconds, worst per-item seconds (its chunk's in-process share plus its pool time)."""
    out, worst = [], 0.0
    start = time.perf_counter()
    for lo in range(0, len(completions), chunk):
        part = {k: v[lo : lo + chunk] for k, v in columns.items()}
        t0 = time.perf_counter()
        get_pool().stats.last_latency = []
        out += fn(completions[lo : lo + chunk], **part)
        elapsed = time.perf_counter() - t0
        pool_worst = max(get_pool().stats.last_latency, default=0.0)
        worst = max(worst, pool_worst + (elapsed - pool_worst) / max(len(part and completions[lo : lo + chunk]), 1))
    return time.perf_counter() - start, worst, out


def mathruler_loop(completions: Sequence[str], refs: Sequence[str]) -> tuple[float, float]:
    """The usual baseline: extract the box, call grade_answer, one item at a time. Items our
    guard would refuse are skipped (they `eval` text or hang sympy) and cost 0 here."""
    from mathruler.grader import grade_answer

    start, worst = time.perf_counter(), 0.0
    for completion, ref in tqdm(list(zip(completions, refs)), desc="mathruler loop", leave=False):
        t0 = time.perf_counter()
        pred = extract_answer(completion)
        if pred is not None and safe_for_sympy(pred) and len(pred) < 300:
            try:
                grade_answer(pred, ref)
            except Exception:  # noqa: BLE001
                pass
        worst = max(worst, time.perf_counter() - t0)
    return time.perf_counter() - start, worst


ODD_FILLS = ["3²", ".", "0x", "1\u00a02", "x⁴+1", "½"]


class _FallbackCounter(logging.Handler):
    """Counts the registry's "scoring row by row" messages (a batch that fell back)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += "row by row" in record.getMessage()


def _cold() -> None:
    """Empty the checker's caches so that every timed batch starts cold (comparable runs)."""
    from mrtasks.mathcheck import answer, normalize, verdict
    from mrtasks.rewards import mask_fill

    for fn in (verdict._quick, answer.parse_answer, normalize.normalize, normalize.final_text, mask_fill.canonical_tokens):
        fn.cache_clear()


def odd_row_timing(seed: int, n: int = 4096) -> dict[str, float]:
    """Seconds for n mask_fill rows, clean and with one odd row (one run per oddity, each with
    cold caches), and how many batches fell back to row-by-row scoring (must be 0)."""
    completions, masks = mask_rollouts(n, seed)
    counter = _FallbackCounter()
    logging.getLogger("mrtasks.rewards.registry").addHandler(counter)
    clean, odd = [], []
    try:
        for k, oddity in enumerate(ODD_FILLS):
            _cold()
            t0 = time.perf_counter()
            mask_fill_reward(completions, masks=masks)
            clean.append(time.perf_counter() - t0)
            comps, refs = list(completions), [list(m) for m in masks]
            i = (k * 997 + 11) % n
            comps[i] = reasoning(random.Random(k)) + "\\boxed{" + "; ".join([oddity] + refs[i][1:]) + "}"
            refs[(i + 1) % n][0] = oddity  # a reference mask the parser cannot read
            _cold()
            t0 = time.perf_counter()
            mask_fill_reward(comps, masks=refs)
            odd.append(time.perf_counter() - t0)
    finally:
        logging.getLogger("mrtasks.rewards.registry").removeHandler(counter)
    return {"clean": sorted(clean)[len(clean) // 2], "odd": sorted(odd)[len(odd) // 2], "fallbacks": counter.count}


def load_answers(path: Path) -> list[str]:
    """The `answer` field of every JSON line (lines that are not JSON objects are skipped); a
    `ValueError` when the file is missing or holds no answer."""
    if not Path(path).is_file():
        raise ValueError(f"--answers {path}: no such file" + (" (it is a folder)" if Path(path).is_dir() else ""))
    answers, bad = [], 0
    for _, row in iter_jsonl(path, errors="yield"):
        if isinstance(row, BadLine):
            bad += 1
        elif row.get("answer") is not None:
            answers.append(str(row["answer"]))
    if not answers:
        extra = f" ({bad} line(s) are not JSON objects or not UTF-8)" if bad else ""
        raise ValueError(f"--answers {path}: no rows with an `answer` field{extra}")
    if bad:
        logger.warning("%s: skipped %d line(s) that are not JSON objects or not UTF-8", path, bad)
    return answers


EXIT_OK, EXIT_USAGE, EXIT_INTERRUPTED = 0, 2, 130


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        prog="python -m mrtasks.rewards.bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="exit codes: 0 the timings were printed; 2 bad arguments or an --answers file that is missing or "
               "holds no answer; 130 interrupted",
    )
    parser.add_argument("--answers", type=Path, required=True, help="JSONL with an `answer` field per row")
    parser.add_argument("-n", type=int, default=8192, help="rollouts per reward (default: one paper-sized step)")
    parser.add_argument("--chunk", type=int, default=8192, help="completions per reward call")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-mathruler", action="store_true", help="do not run the MathRuler baseline loop")
    parser.add_argument("--odd-rows", type=int, default=4096, help="batch size of the one-odd-row timing (0: skip)")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error(f"-n must be >= 1 (rollouts per reward), got {args.n}")
    if args.chunk < 1:
        parser.error(f"--chunk must be >= 1 (completions per reward call), got {args.chunk}")
    if args.odd_rows < 0:
        parser.error(f"--odd-rows must be >= 0 (0 skips that timing), got {args.odd_rows}")
    try:
        answers = load_answers(args.answers)
    except ValueError as e:
        parser.error(str(e))
    try:
        return run(args, answers)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        raise SystemExit(EXIT_INTERRUPTED) from None


def run(args: argparse.Namespace, answers: list[str]) -> dict[str, Any]:
    t0 = time.perf_counter()
    get_pool().start()
    print(f"worker pool: {get_pool().num_workers} workers, started in {time.perf_counter() - t0:.2f} s, "
          f"{get_pool().timeout:.2f} s per item", flush=True)  # fmt: skip

    oc, refs = outcome_rollouts(answers, args.n, args.seed)
    so, orders = step_rollouts(args.n, args.seed)
    mf, masks = mask_rollouts(args.n, args.seed)
    results: dict[str, Any] = {}
    print(f"{'reward':<22} {'items':>6} {'total s':>8} {'items/s':>9} {'worst item s':>13} {'mean':>6}")
    for name, fn, comps, cols in [
        ("outcome", outcome_reward, oc, {"answer": refs}),
        ("step_order", step_order_reward, so, {"order": orders}),
        ("mask_fill (7 masks)", mask_fill_reward, mf, {"masks": masks}),
    ]:
        total, worst, scores = timed(fn, comps, args.chunk, **cols)
        mean = sum(s or 0 for s in scores) / len(scores)
        results[name] = {"seconds": total, "per_s": len(comps) / total, "worst": worst}
        print(f"{name:<22} {len(comps):>6} {total:>8.2f} {len(comps) / total:>9.0f} {worst:>13.3f} {mean:>6.3f}")
    if not args.skip_mathruler:
        total, worst = mathruler_loop(oc, refs)
        results["mathruler loop"] = {"seconds": total, "per_s": len(oc) / total, "worst": worst}
        print(f"{'mathruler loop':<22} {len(oc):>6} {total:>8.2f} {len(oc) / total:>9.0f} {worst:>13.3f}")
    if args.odd_rows > 0:
        odd = results["one odd row"] = odd_row_timing(args.seed, args.odd_rows)
        print(f"mask_fill, {args.odd_rows} rows (median of {len(ODD_FILLS)}, cold caches): clean {odd['clean']:.2f} s, "
              f"with one odd row {odd['odd']:.2f} s; row-by-row fallbacks: {odd['fallbacks']}")  # fmt: skip
    stats = get_pool().stats
    print(f"pool: {stats.items} items sent, {stats.timeouts} timeouts, {stats.crashes} crashes")
    return results


if __name__ == "__main__":
    main()
