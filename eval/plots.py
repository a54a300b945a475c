"""Pass@k curves (k = 1..n, log-scaled) per benchmark, one line per run, saved as PNG, PDF or SVG.

Every figure carries `PLOT_MARKER` in its metadata (PNG `Software`, PDF/SVG `Creator`), so a
command can tell a plot it wrote (and may replace) from a user's image (`is_our_plot`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from eval.tables import display_name

PLOT_FORMATS = ("png", "pdf", "svg")  # by file extension; matplotlib writes each without extra packages
PLOT_MARKER = "mr-rlvr eval.plots, Pass@k curves"
_METADATA_KEY = {"png": "Software", "pdf": "Creator", "svg": "Creator"}
_MAX_OWN_PLOT_BYTES = 64 << 20


def plot_format(path: str | Path) -> str | None:
    """The format a plot path asks for (its extension, lower case) when supported, else None."""
    ext = Path(path).suffix.lower().lstrip(".")
    return ext if ext in PLOT_FORMATS else None


def is_our_plot(path: str | Path) -> bool:
    """True when `path` is a figure `plot_passk_curves` wrote (it carries `PLOT_MARKER`)."""
    try:
        path = Path(path)
        if path.stat().st_size > _MAX_OWN_PLOT_BYTES:
            return False
        return PLOT_MARKER.encode() in path.read_bytes()
    except OSError:
        return False


def plot_passk_curves(runs: dict[str, dict[str, Any]], path: str | Path) -> Path:
    """Draw one panel per benchmark, one line per run (label -> summary); return the path.

    The format follows the extension (`PLOT_FORMATS`); any other is a ValueError."""
    fmt = plot_format(path)
    if fmt is None:
        raise ValueError(f"cannot write a plot to {path}: the supported extensions are "
                         + ", ".join(f".{f}" for f in PLOT_FORMATS))
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
    fig.savefig(path, dpi=120, format=fmt, metadata={_METADATA_KEY[fmt]: PLOT_MARKER})
    plt.close(fig)
    return path
