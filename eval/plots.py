"""Pass@k curves (k = 1..n, log-scaled) per benchmark, one line per run, saved as PNG."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from eval.tables import display_name


def plot_passk_curves(runs: dict[str, dict[str, Any]], path: str | Path) -> Path:
    """Draw one panel per benchmark, one line per run (label -> summary); return the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    benchmarks: list[str] = []
    for summary in runs.values():
        benchmarks += [b for b in summary["benchmarks"] if b not in benchmarks]
    if not benchmarks:
        raise ValueError("no benchmarks to plot")
    cols = min(4, len(benchmarks))
    rows = math.ceil(len(benchmarks) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.0 * rows), squeeze=False)
    for ax, name in zip(axes.flat, benchmarks):
        for label, summary in runs.items():
            bench = summary["benchmarks"].get(name, {})
            curve = bench.get("curve") or bench.get("pass@k")  # the k = 1..n curve, else the reported ks
            if not curve:
                continue
            ks = sorted(int(k) for k in curve)
            ax.plot(ks, [100.0 * curve[str(k)] for k in ks], marker="o", markersize=2.5, label=label)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_title(display_name(name))
        ax.set_xlabel("k")
        ax.set_ylabel("Pass@k (%)")
        ax.set_ylim(0, 100)
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(benchmarks):]:
        ax.set_visible(False)
    if axes.flat[0].get_legend_handles_labels()[0]:
        axes.flat[0].legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
