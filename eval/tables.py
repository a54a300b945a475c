"""Markdown tables laid out like the paper's Table 1 (Pass@k in %, benchmarks as rows).

A summary (see `eval.run`) stores Pass@k as fractions under
`summary["benchmarks"][name]["pass@k"]["1"]` and the unweighted mean over benchmarks under
`summary["average"]["pass@k"]`; the tables show percentages with two decimals.
"""

from __future__ import annotations

import math
from typing import Any

DISPLAY_NAMES = {"aime24": "AIME24", "aime25": "AIME25", "amc23": "AMC23", "math500": "MATH500"}
AVERAGE = "Average"
MISSING = "–"


def display_name(benchmark: str) -> str:
    return DISPLAY_NAMES.get(benchmark, benchmark)


def passk_value(summary: dict[str, Any], benchmark: str, k: int) -> float | None:
    """Pass@k in percent for a benchmark (or `AVERAGE`), None when the summary lacks it."""
    block = summary.get("average", {}) if benchmark == AVERAGE else summary["benchmarks"].get(benchmark, {})
    value = block.get("pass@k", {}).get(str(k))
    return None if value is None else 100.0 * value


def relative_gain(value: float, reference: float) -> float | None:
    """Relative change of `value` over `reference`, in percent (None when the reference is 0)."""
    return None if reference == 0 else 100.0 * (value - reference) / reference


def _fmt(value: float | None) -> str:
    return MISSING if value is None or math.isnan(value) else f"{value:.2f}"


def _fmt_gain(gain: float | None) -> str:
    if gain is None:
        return "(n/a)"
    arrow = "↑" if gain > 0 else "↓" if gain < 0 else "="
    return f"({arrow}{abs(gain):.2f}%)"


def _rows(summaries: list[dict[str, Any]]) -> list[str]:
    names: list[str] = []
    for s in summaries:
        names += [b for b in s["benchmarks"] if b not in names]
    return names + [AVERAGE]


def single_table(summary: dict[str, Any]) -> str:
    """One run: `| Benchmark | Pass@1 (%) | Pass@5 (%) | Pass@8 (%) |`, plus the average row."""
    ks = summary["k"]
    lines = [
        "| Benchmark | " + " | ".join(f"Pass@{k} (%)" for k in ks) + " |",
        "|---|" + "---:|" * len(ks),
    ]
    for name in _rows([summary]):
        cells = [_fmt(passk_value(summary, name, k)) for k in ks]
        lines.append(f"| {display_name(name)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def average_gain(summaries: list[dict[str, Any]], i: int, reference: int, k: int) -> float | None:
    """The paper's average gain: the mean of the per-benchmark relative gains of run `i` over
    `reference` (not the gain of the mean Pass@k), over benchmarks where both have a value."""
    gains = []
    for name in _rows(summaries)[:-1]:
        v, ref = passk_value(summaries[i], name, k), passk_value(summaries[reference], name, k)
        if v is not None and ref is not None:
            gain = relative_gain(v, ref)
            if gain is not None:
                gains.append(gain)
    return sum(gains) / len(gains) if gains else None


AVERAGE_NOTE = (
    "Average: the mean Pass@k over benchmarks; its gain is the mean of the per-benchmark gains "
    "(the paper's definition), not the gain of the mean Pass@k."
)


def comparison_table(summaries: list[dict[str, Any]], labels: list[str], reference: int) -> str:
    """Several runs side by side per Pass@k group, as in the paper's Table 1.

    Columns after `reference` (the +GRPO column in the paper) carry their relative gain over
    it; in the Average row that gain is the mean of the per-benchmark gains, as in the paper.
    The best value of each group is bold (none when all tie).
    """
    if len(labels) != len(summaries):
        raise ValueError(f"{len(summaries)} summaries but {len(labels)} labels")
    if not 0 <= reference < len(summaries):
        raise ValueError(f"reference column {reference} out of range")
    ks = summaries[0]["k"]
    header = ["Benchmark"] + [f"Pass@{k} {label}" for k in ks for label in labels]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    for name in _rows(summaries):
        cells = []
        for k in ks:
            values = [passk_value(s, name, k) for s in summaries]
            present = [round(v, 2) for v in values if v is not None]
            best = max(present) if len(set(present)) > 1 else None  # no bold when all tie
            ref = values[reference]
            for i, v in enumerate(values):
                cell = _fmt(v)
                if v is not None and round(v, 2) == best:
                    cell = f"**{cell}**"
                if i > reference and v is not None and ref is not None:
                    gain = average_gain(summaries, i, reference, k) if name == AVERAGE else relative_gain(v, ref)
                    cell += " " + _fmt_gain(gain)
                cells.append(cell)
        lines.append(f"| {display_name(name)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def settings_line(summary: dict[str, Any]) -> str:
    g = summary["generation"]
    return (
        f"n = {g['n']}, temperature {g['temperature']}, top-p {g['top_p']}, "
        f"top-k {g.get('top_k') or 'off'}, "
        f"max {g['max_new_tokens']} new tokens, seed {g['seed']}, backend {g['backend']['name']}, "
        f"prompt {summary['prompt']['style']}"
    )


def run_report(summary: dict[str, Any]) -> str:
    """The `table.md` of one run: a title, the settings, the table."""
    return (
        f"# Pass@k: {summary['model']['name_or_path']}\n\n"
        f"{settings_line(summary)}\n\n"
        f"{single_table(summary)}"
    )
