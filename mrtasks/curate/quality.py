"""Quality figures of a build, per config and source (issue 9): are the tasks what they claim to be?

- `masked_then_fill`: masks per row, junk masks (by `heuristic.junk_reason`, must be 0), the share
  of masks copied from the problem statement, and rows whose masked prompt still shows a boxed
  final answer (must be 0).
- `step_reordering`: the histogram of step counts, the share of 3-step rows, and baselines that
  never read the maths: `random` (a seeded random order), `surface_cue` (an order that only puts
  "Let/Given/First/According to ..." steps first and "Therefore/Thus/\\boxed" steps last) and
  `dataflow` (a step that computes a number before the steps that use it, ties by surface cues:
  `mrtasks.rewards.baselines.dataflow_order`). All are scored with the real reward; a score far
  above random means the order can be recovered without the maths.
- `error_correction`: error rows by kind, and a calculator (`baselines.calculator_correction`):
  the share of error rows whose shown formula is false on its own (`located`: a calculator finds
  the step) and the share it repairs by recomputation (`solved`: the reward's 1.0), overall and
  per kind; the kinds `quantity` and `dropped_term` are built so that it finds neither.
- yields: per source, the rows read, kept by the source readers, surviving problem filters and
  annotation (`trajectories`), and the rows of every registered task's config.

The dataflow and calculator baselines read every formula of a row, so they are computed on a seeded
sample of at most `BASELINE_ROWS` rows per config (error rows for the calculator); a source's figure
is over its rows in that sample, and `baseline_rows` / `calculator_rows` say how many.

`quality_figures(result)` is pure: the same result gives the same figures (seeded baselines).
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from typing import Any

from mrtasks.curate.heuristic import BOOKKEEPING, boxed_spans, junk_reason, role
from mrtasks.curate.heuristic.spans import alignment_cut
from mrtasks.mathcheck import last_boxed
from mrtasks.rewards.baselines import calculator_correction, dataflow_order, surface_cue_rank
from mrtasks.rewards.step_order import order_score
from mrtasks.tasks import ERROR_CORRECTION, MASK_TOKEN, MASKED_THEN_FILL, STEP_REORDERING, TRAJECTORIES, list_tasks

MASKED, STEPS, ERRORS = MASKED_THEN_FILL, STEP_REORDERING, ERROR_CORRECTION
ALL = "all"
BASELINE_ROWS = 600
"""Rows per config (all sources together) the dataflow and calculator baselines are computed on:
a seeded sample, since they cost about 1 ms per row (the whole shared-corpora build has ~2,800
Step Reordering rows and ~1,900 error rows)."""


def _squash(text: str) -> str:
    return "".join(text.replace("$", "").split())


def copied_from_problem(mask: str, problem: str) -> bool:
    """True when the mask occurs verbatim (ignoring whitespace and `$`) in the problem statement."""
    m = _squash(mask)
    return bool(m) and m in _squash(problem)


def _boxes(text: str) -> list[str]:
    """The contents of every `\\boxed{...}` (balanced braces) in text."""
    return [text[a:b] for a, b in boxed_spans(text, 0, len(text))]


def visible_boxed_answer(masked_solution: str, solution: str | None = None) -> bool:
    """True when the masked solution still shows the boxed final answer: a `\\boxed{}` whose
    content is the solution's last box (any unmasked, non-empty box when solution is None;
    placeholder boxes such as `\\boxed{\\phantom{2}}` in a problem about a box do not count)."""
    if solution is None:
        return any(MASK_TOKEN not in b and b.strip() for b in _boxes(masked_solution))
    final = last_boxed(solution)
    return bool(final) and any(_squash(b) == _squash(final) for b in _boxes(masked_solution))


def surface_cue_order(shuffled: list[str]) -> list[int]:
    """Shown step numbers ordered by wording only: opening cues first, closing cues last."""
    return sorted(range(len(shuffled)), key=lambda i: (surface_cue_rank(shuffled[i]), i))


def _mean(xs: list[float]) -> float:
    return round(sum(xs) / len(xs), 4) if xs else 0.0


def mask_spans(row: dict[str, Any]) -> list[tuple[int, int]]:
    """Where each of a Masked-Then-Fill row's masks sits in its solution, as (start, end)."""
    pieces = row["masked_solution"].split(MASK_TOKEN)
    spans, pos = [], 0
    for piece, mask in zip(pieces, row["masks"]):
        pos += len(piece)
        spans.append((pos, pos + len(mask)))
        pos += len(mask)
    return spans


def bookkeeping_role(row: dict[str, Any], span: tuple[int, int]) -> str | None:
    """The bookkeeping role (`heuristic.context`) of a masked span in its solution, or None."""
    r = role(row["solution"], span[0], span[1], row["problem"])
    return r if r in BOOKKEEPING else None


Memo = dict[tuple[str, int], Any]
"""Per-row results shared by the all-sources and per-source figures of one call (keyed by row object)."""


def _memo(memo: Memo, name: str, row: dict[str, Any], fn: Any) -> Any:
    key = (name, id(row))
    if key not in memo:
        memo[key] = fn(row)
    return memo[key]


def _whole_row(mask: str) -> bool:
    """An align row `A &= B` as an LLM annotator lists it: a formula that keeps its `&` (the labelling guide allows it),
    not the alignment residue of a continuation row `&= B`, which `integrity` cuts."""
    text = mask.strip()
    cut = alignment_cut(text, 0, len(text))
    return cut is not None and bool(text[: cut - 1].strip())


def _mask_reasons(row: dict[str, Any]) -> tuple[list[str], list[str], int, bool]:
    """One row's junk reasons, bookkeeping roles, masks copied from the problem and visible boxed answer."""
    answers = {b.strip() for b in _boxes(row["solution"])}  # a boxed final answer may be a bare number
    junk = [reason for m in row["masks"] if m.strip() not in answers and (reason := junk_reason(m))
            and not (reason == "alignment_residue" and _whole_row(m))]
    bookkeeping = [b for m, span in zip(row["masks"], mask_spans(row)) if m.strip() not in answers
                   and (b := bookkeeping_role(row, span))]  # fmt: skip
    copied = sum(copied_from_problem(m, row["problem"]) for m in row["masks"])
    return junk, bookkeeping, copied, visible_boxed_answer(row["masked_solution"], row["solution"])


def _masked_figures(rows: list[dict[str, Any]], memo: Memo | None = None) -> dict[str, Any]:
    memo = {} if memo is None else memo
    masks = [m for r in rows for m in r["masks"]]
    per_row = [_memo(memo, "masks", r, _mask_reasons) for r in rows]  # shared by "all" and the sources
    junk: Counter[str] = Counter(reason for j, _, _, _ in per_row for reason in j)
    bookkeeping: Counter[str] = Counter(b for _, bs, _, _ in per_row for b in bs)
    copied = sum(c for _, _, c, _ in per_row)
    return {
        "rows": len(rows),
        "masks_per_row": _mean([len(r["masks"]) for r in rows]),
        "distinct_masks_per_row": _mean([len({_squash(m) for m in r["masks"]}) for r in rows]),
        "junk_masks": sum(junk.values()),
        "junk_by_reason": dict(sorted(junk.items())),
        "bookkeeping_masks": sum(bookkeeping.values()),
        "bookkeeping_by_reason": dict(sorted(bookkeeping.items())),
        "copied_from_problem_share": round(copied / len(masks), 4) if masks else 0.0,
        "rows_with_visible_boxed_answer": sum(v for _, _, _, v in per_row),
    }


def baseline_sample(rows: list[dict[str, Any]], seed: int, name: str, size: int | None = BASELINE_ROWS) -> set[int] | None:
    """The rows (by `id`) a costly baseline is computed on: a seeded sample of `size` (None: all rows)."""
    if size is None or len(rows) <= size:
        return None
    return {id(rows[k]) for k in random.Random(f"{seed}:quality:{name}").sample(range(len(rows)), size)}


def _step_figures(rows: list[dict[str, Any]], seed: int, memo: Memo | None = None, sample: set[int] | None = None) -> dict[str, Any]:
    memo = {} if memo is None else memo
    hist = Counter(len(r["steps"]) for r in rows)
    rng = random.Random(seed)
    rand, cue, flow = [], [], []
    for r in rows:
        n = len(r["order"])
        perm = list(range(n))
        rng.shuffle(perm)
        rand.append(order_score(perm, r["order"]))
        cue.append(_memo(memo, "cue", r, lambda r: order_score(surface_cue_order(r["shuffled_steps"]), r["order"])))
        if sample is None or id(r) in sample:
            flow.append(_memo(memo, "flow", r, lambda r: order_score(
                dataflow_order(r["shuffled_steps"], r.get("problem") or "", cues=True), r["order"])))  # fmt: skip
    return {
        "rows": len(rows),
        "steps_histogram": {str(k): v for k, v in sorted(hist.items())},
        "mean_steps": _mean([len(r["steps"]) for r in rows]),
        "three_step_share": round(hist.get(3, 0) / len(rows), 4) if rows else 0.0,
        "baseline_random": _mean(rand),
        "baseline_surface_cue": _mean(cue),
        "baseline_dataflow": _mean(flow),
        "baseline_rows": len(flow),
    }


def _error_figures(rows: list[dict[str, Any]], memo: Memo | None = None, sample: set[int] | None = None) -> dict[str, Any]:
    """Error rows by kind, and the calculator's located / solved shares (overall and per kind, on
    the error rows in `sample`; all of them when None)."""
    from mrtasks.rewards import get_reward

    memo = {} if memo is None else memo
    errors = [r for r in rows if r["error_step"] >= 0]
    error_types = Counter(r["error_type"] for r in errors)
    errors = [r for r in errors if sample is None or id(r) in sample]
    todo = [r for r in errors if ("calculator", id(r)) not in memo]
    if todo:
        columns = {k: [r.get(k) for r in todo] for k in ("error_step", "original", "corrupted", "error_type", "task")}
        for r, s in zip(todo, get_reward(ERRORS)([calculator_correction(r["steps"]) for r in todo], **columns)):
            memo[("calculator", id(r))] = float(s or 0.0)
    scores = [memo[("calculator", id(r))] for r in errors]
    kinds: dict[str, list[float]] = defaultdict(list)
    for r, s in zip(errors, scores):
        kinds[r["error_type"]].append(s)

    def shares(xs: list[float]) -> dict[str, float]:
        return {"located": round(sum(x > 0 for x in xs) / len(xs), 4) if xs else 0.0,
                "solved": round(sum(x == 1.0 for x in xs) / len(xs), 4) if xs else 0.0}  # fmt: skip

    return {
        "rows": len(rows),
        "error_rows": sum(error_types.values()),
        "error_types": dict(sorted(error_types.items())),
        "calculator_rows": len(errors),
        "calculator": shares(scores),
        "calculator_by_type": {k: shares(v) for k, v in sorted(kinds.items())},
    }


def _all_rows(result: Any, config: str) -> list[dict[str, Any]]:
    return [r for split in sorted(result.rows.get(config, {})) for r in result.rows[config][split]]


def quality_figures(result: Any, seed: int = 0) -> dict[str, Any]:
    """The figures for a `PipelineResult`: {config: {source or "all": figures}} plus `yields`."""
    out: dict[str, Any] = {}
    memo: Memo = {}
    samples = {
        STEPS: baseline_sample(_all_rows(result, STEPS), seed, STEPS, BASELINE_ROWS),
        ERRORS: baseline_sample([r for r in _all_rows(result, ERRORS) if r["error_step"] >= 0], seed, ERRORS, BASELINE_ROWS),
    }
    for config, fn in (
        (MASKED, lambda rows: _masked_figures(rows, memo)),
        (STEPS, lambda rows: _step_figures(rows, seed, memo, samples[STEPS])),
        (ERRORS, lambda rows: _error_figures(rows, memo, samples[ERRORS])),
    ):
        rows = _all_rows(result, config)
        by_source: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in rows:
            by_source[r["source"]].append(r)
        out[config] = {ALL: fn(rows), **{s: fn(by_source[s]) for s in sorted(by_source)}}
    yields: dict[str, dict[str, Any]] = {}
    for s in result.sources:
        yields.setdefault(s["name"], Counter())
        yields[s["name"]]["read"] += s["rows"]
        yields[s["name"]]["source_kept"] += s["kept"]
    for config in (TRAJECTORIES, *list_tasks()):
        for r in _all_rows(result, config):
            yields.setdefault(r["source"], Counter())[config] += 1
    out["yields"] = {
        name: {k: int(c.get(k, 0)) for k in ("read", "source_kept", TRAJECTORIES, *list_tasks())}
        for name, c in sorted(yields.items())
    }
    return out


def quality_table(figures: dict[str, Any]) -> str:
    """Markdown tables of the figures (for the dataset card)."""
    def table(header: list[str], rows: list[list[Any]]) -> str:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        return "\n".join(lines + ["| " + " | ".join(str(v) for v in row) + " |" for row in rows])

    parts = []
    m = figures.get(MASKED, {})
    parts.append(table(
        ["source", "rows", "masks/row", "distinct masks/row", "junk masks", "bookkeeping masks", "copied from problem",
         "visible boxed answer"],
        [[s, f["rows"], f["masks_per_row"], f.get("distinct_masks_per_row", ""), f["junk_masks"], f.get("bookkeeping_masks", ""),
          f"{f['copied_from_problem_share']:.1%}", f["rows_with_visible_boxed_answer"]] for s, f in m.items()],
    ))
    st = figures.get(STEPS, {})
    parts.append(table(
        ["source", "rows", "mean steps", "3-step share", "steps histogram", "random baseline", "surface-cue baseline",
         "dataflow baseline (rows)"],
        [[s, f["rows"], f"{f['mean_steps']:.2f}", f"{f['three_step_share']:.1%}",
          " ".join(f"{k}:{v}" for k, v in f["steps_histogram"].items()), f"{f['baseline_random']:.3f}",
          f"{f['baseline_surface_cue']:.3f}", f"{f.get('baseline_dataflow', 0.0):.3f} ({f.get('baseline_rows', f['rows'])})"]
         for s, f in st.items()],
    ))
    ec = figures.get(ERRORS, {})
    if ec:
        parts.append(table(
            ["source", "rows", "error rows", "error kinds", "calculator rows", "calculator locates", "calculator solves",
             "solves per kind"],
            [[s, f["rows"], f["error_rows"], " ".join(f"{k}:{v}" for k, v in f["error_types"].items()),
              f.get("calculator_rows", f["error_rows"]),
              f"{f['calculator']['located']:.1%}", f"{f['calculator']['solved']:.1%}",
              " ".join(f"{k}:{v['solved']:.0%}" for k, v in f["calculator_by_type"].items())]
             for s, f in ec.items()],
        ))
    y = figures.get("yields", {})
    parts.append(table(
        ["source", "read", "kept by reader", "after filters + annotation", *list_tasks()],
        [[s, v["read"], v["source_kept"], v[TRAJECTORIES], *(v[t] for t in list_tasks())] for s, v in y.items()],
    ))
    return "\n\n".join(parts)


def fill_answers_from_box(trajectories: list[Any]) -> tuple[list[Any], int]:
    """Give a trajectory without an answer the last `\\boxed{}` of its solution (so the outcome
    config is not empty when no answer field is mapped); returns the trajectories and how many
    answers were taken from a box (`answer_from_box` in the build's figures)."""
    from dataclasses import replace

    out, n = [], 0
    for t in trajectories:
        if not (t.answer or "").strip() and (box := last_boxed(t.solution)):
            t = replace(t, answer=box)
            n += 1
        out.append(t)
    return out, n


def quality_section(figures: dict[str, Any]) -> str:
    """The card's quality section: what each figure means, then the tables."""
    if not figures:
        return "(no quality figures: the build ran without them)"
    intro = (
        "Masked-Then-Fill: masks per row (a formula written more than once is masked at every copy, "
        "so this can exceed the distinct masks per row); junk masks (bare numbers or units, fragments such "
        "as `t_1 - t_0 =`, unbalanced braces, alignment residue such as `&= 5`, tables, index ranges; a whole "
        "align row `A &= B` is a formula; must be 0); "
        "bookkeeping masks (case labels and hypotheses, notation definitions, quantifier ranges, read "
        "from the words around the mask); the share of masks copied verbatim from the "
        "problem statement; rows whose masked prompt still shows a boxed final answer (must be 0). "
        "Step Reordering: the histogram of step counts and three baselines scored with the real reward, "
        "a random order, an order read off wording alone (\"Let/Given\" first, \"Therefore/\\\\boxed\" "
        "last) and a dataflow order (a step that computes a number before the steps that use it, ties "
        "by wording): the closer they are to random, the less the order can be recovered without the "
        "maths. Error Correction: error rows by kind, and a calculator that names the first step whose "
        "formula is false on its own and recomputes it: the share of error rows it locates (step "
        "found) and solves (reward 1.0), per kind; `quantity` and `dropped_term` edits keep the step "
        "true on its own, so it finds neither. The dataflow baseline and the calculator are computed "
        f"on a seeded sample of at most {BASELINE_ROWS} rows per config (error rows for the calculator; "
        "a source's figure over its rows in the sample; the tables give how many). "
        f"Outcome answers taken from the solution's last `\\boxed{{}}` (no answer "
        f"field mapped): {figures.get('answer_from_box', 0)}."
    )
    return intro + "\n\n" + quality_table(figures)
