"""The testbed's report: `docs/learning.md` and its PNGs, written from a `training.learn` run folder.

Everything comes from the files the real commands wrote: each stage's `reward_log.jsonl` (TRL's
log records: `rewards/<name>/mean`, `frac_reward_zero_std`) and `training_summary.json`, each
evaluation's `summary.json` (the Pass@k curve k = 1..n), the warm start's `warm_start.json`, the
build's `build_stats.json`, and `timings.json` (wall time of every command).

    python -m training.learn --report-only     # rewrite the report from outputs/learn
"""

from __future__ import annotations

import json
import math
import os
import statistics
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

RISE = 0.15
"""A stage's reward must rise by this much from its first fifth of steps to its last fifth."""
WINDOW = 5
"""Steps in the rolling mean of the plotted reward curves."""


# --- reading the run -----------------------------------------------------------------------------


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.is_file() else {}


def stage_dirs(config: Any) -> list[tuple[str, str, str]]:
    """(stage folder, label, reward name) of every stage an arm runs, in report order."""
    out = [(f"stage1_{t}", f"Stage I: {t}", t) for t in config.arms]
    if config.stage2:
        out += [(f"stage2_{t}", f"Stage II after {t}", "outcome") for t in config.arms]
    if config.baseline:
        out.append(("grpo_baseline", "GRPO baseline (Stage II from the warm start)", "outcome"))
    return out


def fixed_batch_dirs(config: Any) -> list[tuple[str, str, str]]:
    """(stage folder, label, reward name) of the fixed-batch check's runs (`training.learn`)."""
    if not getattr(config, "fixed_batch_prompts", 0):
        return []
    out = [(f"stage1_{t}", t, t) for t in config.arms]
    if config.baseline:
        out.append(("grpo_baseline", "outcome", "outcome"))
    return out


def stage_curves(run_root: Path, folder: str, reward: str) -> dict[str, list[float]]:
    """Per optimizer step: the mean reward and the share of zero-variance groups (last record per step)."""
    by_step: dict[int, dict[str, Any]] = {}
    for record in read_jsonl(run_root / folder / "reward_log.jsonl"):
        if f"rewards/{reward}/mean" in record:
            by_step[record["step"]] = record
    steps = sorted(by_step)
    return {
        "step": [float(s) for s in steps],
        "reward": [float(by_step[s][f"rewards/{reward}/mean"]) for s in steps],
        "zero_std": [float(by_step[s].get("frac_reward_zero_std", float("nan"))) for s in steps],
        "length": [float(by_step[s].get("completions/mean_length", float("nan"))) for s in steps],
        "kl": [float(by_step[s].get("kl", float("nan"))) for s in steps],
    }


def fifths(values: Sequence[float]) -> tuple[float, float]:
    """Means over the first and the last fifth of the values (at least one value each)."""
    if not values:
        return float("nan"), float("nan")
    n = max(1, math.ceil(len(values) / 5))
    return statistics.fmean(values[:n]), statistics.fmean(values[-n:])


def spread(values: Sequence[float]) -> tuple[float, float, float, float]:
    """(mean, sample std, min, max); std 0 for one value."""
    vals = [v for v in values if not math.isnan(v)]
    if not vals:
        return (float("nan"),) * 4  # type: ignore[return-value]
    std = statistics.stdev(vals) if len(vals) > 1 else 0.0
    return statistics.fmean(vals), std, min(vals), max(vals)


def pct(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{100 * value:.1f}"


def fmt_spread(values: Sequence[float], scale: float = 100.0, digits: int = 1) -> str:
    mean, std, lo, hi = spread(values)
    if math.isnan(mean):
        return "n/a"
    if len(values) == 1:
        return f"{scale * mean:.{digits}f}"
    return f"{scale * mean:.{digits}f} ± {scale * std:.{digits}f} ({scale * lo:.{digits}f}–{scale * hi:.{digits}f})"


def rolling(values: Sequence[float], window: int = WINDOW) -> list[float]:
    out = []
    for i in range(len(values)):
        chunk = [v for v in values[max(0, i - window + 1): i + 1] if not math.isnan(v)]
        out.append(statistics.fmean(chunk) if chunk else float("nan"))
    return out


def eval_curve(summary: dict[str, Any], benchmark: str) -> dict[int, float]:
    bench = summary.get("benchmarks", {}).get(benchmark, {})
    return {int(k): float(v) for k, v in (bench.get("curve") or {}).items()}


# --- plots ---------------------------------------------------------------------------------------


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_curves(panels: list[tuple[str, dict[int, dict[str, list[float]]]]], key: str, ylabel: str, path: Path) -> Path:
    """One panel per stage: per step the rolling mean over seeds (line) and its min-max over seeds
    (band); the raw per-step mean over seeds is the thin line."""
    plt = _plt()
    cols = min(3, len(panels))
    rows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.3 * rows), squeeze=False)
    for ax, (title, by_seed) in zip(axes.flat, panels):
        curves = [c for c in by_seed.values() if c["step"]]
        if not curves:
            ax.set_title(f"{title}\n(no log)")
            continue
        n = min(len(c[key]) for c in curves)
        steps = curves[0]["step"][:n]
        raw = [statistics.fmean(c[key][i] for c in curves) for i in range(n)]
        smooth = [rolling(c[key][:n]) for c in curves]
        mean = [statistics.fmean(s[i] for s in smooth) for i in range(n)]
        lo = [min(s[i] for s in smooth) for i in range(n)]
        hi = [max(s[i] for s in smooth) for i in range(n)]
        ax.plot(steps, raw, color="0.6", linewidth=0.8, label="mean over seeds")
        ax.plot(steps, mean, color="C0", linewidth=2.0, label=f"rolling mean ({WINDOW} steps)")
        ax.fill_between(steps, lo, hi, color="C0", alpha=0.2, label="min–max over seeds")
        ax.set_title(f"{title} ({len(curves)} seed{'s' if len(curves) > 1 else ''})", fontsize=9)
        ax.set_xlabel("optimizer step")
        ax.set_ylabel(ylabel)
        ax.set_ylim(-0.02, 1.02)
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_passk(rows: dict[str, list[dict[int, float]]], path: Path) -> Path:
    """Pass@k against k (log scale) per arm: mean over seeds, min-max band."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    for i, (label, curves) in enumerate(rows.items()):
        curves = [c for c in curves if c]
        if not curves:
            continue
        ks = sorted(set.intersection(*(set(c) for c in curves)))
        mean = [100 * statistics.fmean(c[k] for c in curves) for k in ks]
        ax.plot(ks, mean, marker="o", markersize=2.5, color=f"C{i}", label=label)
        if len(curves) > 1:
            ax.fill_between(ks, [100 * min(c[k] for c in curves) for k in ks],
                            [100 * max(c[k] for c in curves) for k in ks], color=f"C{i}", alpha=0.15)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("k")
    ax.set_ylabel("Pass@k on the held-out problems (%)")
    ax.set_ylim(0, 100)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# --- the report ----------------------------------------------------------------------------------


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    return lines + ["| " + " | ".join(r) + " |" for r in rows]


def _minutes(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds / 60:.1f} min ({seconds:.0f} s)"


def machine(cores: int | None, gpu: str | None) -> str:
    """Where the run ran: the GRPO steps go to a GPU when one is present (TRL's default device)."""
    where = f"a machine with {cores} cores"
    if gpu:
        where += f" and one {gpu} (the GRPO steps ran on it; the warm start and the evaluations on the CPU)"
    return where


def write_report(config: Any, paths: Any, report: Path, command: str) -> dict[str, Any]:
    """Write the Markdown report and its PNGs beside it; return the checks' verdicts."""
    from training.learn import BASELINE, CONTROL, HELDOUT_NAME, WARM_START, arm_models, eval_name, passk_ks

    report = Path(report)
    report.parent.mkdir(parents=True, exist_ok=True)
    stem = report.stem
    out = paths.out
    timings = read_json(out / "timings.json")
    record = read_json(out / "learn_record.json")
    warm = read_json(paths.warm_start / "warm_start.json")
    build = read_json(paths.dataset / "build_stats.json")
    verdict: dict[str, Any] = {"ok": True}

    # Reward curves per stage and seed.
    stages = stage_dirs(config)
    curves: dict[str, dict[int, dict[str, list[float]]]] = {}
    summaries: dict[str, dict[int, dict[str, Any]]] = {}
    for folder, _, reward in stages:
        curves[folder] = {s: stage_curves(paths.run_root(s), folder, reward) for s in config.seeds}
        summaries[folder] = {s: read_json(paths.run_root(s) / folder / "training_summary.json") for s in config.seeds}
    reward_png = plot_curves([(label, curves[f]) for f, label, _ in stages], "reward", "mean reward",
                             report.with_name(f"{stem}_rewards.png"))
    zero_png = plot_curves([(label, curves[f]) for f, label, _ in stages], "zero_std",
                           "share of groups with equal rewards", report.with_name(f"{stem}_zero_std.png"))

    rise_rows, rise_ok = [], True
    for folder, label, _ in stages:
        for seed in config.seeds:
            c = curves[folder][seed]["reward"]
            first, last = fifths(c)
            ok = (last - first) >= RISE
            rise_ok &= ok
            verdict.setdefault("rise_per_stage", []).append((label, seed, ok))
            verdict.setdefault("rises", {})[f"{folder}:seed{seed}"] = {
                "steps": len(c), "first_fifth": first, "last_fifth": last, "rise": last - first,
                "mean_reward": statistics.fmean(c) if c else float("nan"),
                "zero_std_mean": statistics.fmean(z) if (z := [v for v in curves[folder][seed]["zero_std"]
                                                              if not math.isnan(v)]) else float("nan")}
            kl = curves[folder][seed]["kl"]
            kl_end = fifths(kl)[1] if kl else float("nan")
            verdict["rises"][f"{folder}:seed{seed}"]["kl_last_fifth"] = kl_end
            rise_rows.append([label, str(seed), str(len(c)), f"{first:.3f}", f"{last:.3f}", f"{last - first:+.3f}",
                              "yes" if ok else "**no**", f"{kl_end:.3f}"])
    verdict["rise"] = rise_ok

    # The fixed-batch check: the same rewards on a few prompts seen every step.
    fixed = {label: stage_curves(paths.fixed_batch, folder, reward) for folder, label, reward in fixed_batch_dirs(config)}
    fixed_rows = []
    for label, c in fixed.items():
        first, last = fifths(c["reward"])
        zero = [v for v in c["zero_std"] if not math.isnan(v)]
        ok = bool(c["reward"]) and (last - first) >= RISE
        verdict.setdefault("fixed_batch_rises", {})[label] = {
            "steps": len(c["reward"]), "first_fifth": first, "last_fifth": last, "rise": last - first, "ok": ok,
            "zero_std_mean": statistics.fmean(zero) if zero else float("nan")}
        fixed_rows.append([label, str(len(c["reward"])), f"{first:.3f}", f"{last:.3f}", f"{last - first:+.3f}",
                           "yes" if ok else "**no**", f"{100 * statistics.fmean(zero):.0f}%" if zero else "n/a"])
    verdict["fixed_batch"] = all(r["ok"] for r in verdict.get("fixed_batch_rises", {}).values()) if fixed else None
    fixed_png = (plot_curves([(label, {1: c}) for label, c in fixed.items()], "reward", "mean reward",
                             report.with_name(f"{stem}_fixed_batch.png")) if fixed else None)

    zero_rows = []
    for folder, label, _ in stages:
        firsts, lasts, alls = [], [], []
        for seed in config.seeds:
            z = [v for v in curves[folder][seed]["zero_std"] if not math.isnan(v)]
            if z:
                f, la = fifths(z)
                firsts.append(f)
                lasts.append(la)
                alls.append(statistics.fmean(z))
        zero_rows.append([label, fmt_spread(firsts), fmt_spread(lasts), fmt_spread(alls)])

    # Pass@k per arm.
    ks = passk_ks(config.eval_n)
    models = arm_models(config, paths)
    labels = {WARM_START: "warm start (SFT)", BASELINE: "GRPO baseline"}
    labels.update({f"mr_rlvr:{t}": f"MR-RLVR ({t})" for t in config.arms})
    evals: dict[str, list[dict[int, float]]] = {}
    if config.evaluate:
        warm_summary = read_json(paths.eval_dir(WARM_START) / "summary.json")
        evals[WARM_START] = [eval_curve(warm_summary, HELDOUT_NAME)]
        for arm, by_seed in models.items():
            evals[arm] = [eval_curve(read_json(paths.eval_dir(eval_name(arm, s)) / "summary.json"), HELDOUT_NAME)
                          for s in by_seed]
    passk_rows = []
    for arm, curves_ in evals.items():
        passk_rows.append([labels[arm], *[fmt_spread([c.get(k, float("nan")) for c in curves_]) for k in ks]])
    passk_png = plot_passk({labels[a]: c for a, c in evals.items()}, report.with_name(f"{stem}_passk.png")) if evals else None

    work, work_means = _right_work(paths, models, labels) if evals else ([], {})
    if work_means:
        verdict["right_work"] = work_means
    control = _control(config, paths, evals.get(WARM_START, [{}])[0], ks, CONTROL, HELDOUT_NAME) if evals else None
    verdict["control"] = control["equal"] if control else None

    warm_p1 = evals.get(WARM_START, [{}])[0].get(1, float("nan")) if evals else float("nan")
    above_rows, above_ok = [], True
    for arm in models:
        if arm not in evals:
            continue
        for seed, c in zip(config.seeds, evals[arm]):
            p1 = c.get(1, float("nan"))
            ok = p1 > warm_p1
            above_ok &= ok
            above_rows.append([labels[arm], str(seed), pct(p1), pct(warm_p1), f"{100 * (p1 - warm_p1):+.1f}",
                               "yes" if ok else "**no**"])
    verdict["above_warm_start"] = above_ok if evals else None
    verdict["warm_start_pass1"] = warm_p1

    comparisons = []
    if BASELINE in evals:
        base = evals[BASELINE]
        for arm in models:
            if arm == BASELINE or arm not in evals:
                continue
            row = [labels[arm]]
            for k in (1, 8, ks[-1]):
                diffs = [m.get(k, float("nan")) - b.get(k, float("nan")) for m, b in zip(evals[arm], base)]
                mean, std, lo, hi = spread(diffs)
                row.append(f"{100 * mean:+.1f} ± {100 * std:.1f} (per seed: {', '.join(f'{100 * d:+.1f}' for d in diffs)})")
            comparisons.append(row)
            diffs1 = [m.get(1, float("nan")) - b.get(1, float("nan")) for m, b in zip(evals[arm], base)]
            verdict[f"pass1_gain:{arm}"] = spread(diffs1)[0]
            verdict[f"pass1_gain_per_seed:{arm}"] = diffs1

    # Time.
    # The invocations of this mode's experiment: a full run in a default run's folder adds arms, so
    # the default report leaves out the invocations that ran other arms.
    runs = [r for r in timings.get("runs", []) if set(r.get("arms", ())) <= set(config.arms)]
    last = runs[-1] if runs else {}
    # A resumed run is several invocations: every command ran in exactly one of them (a finished
    # phase is skipped), so the phases' times are the sums over all invocations.
    commands: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for run in runs:
        for key, value in run.get("commands", {}).items():
            commands[key] = commands.get(key, 0.0) + value
        for key, value in (run.get("cpu_s") or {}).items():
            cpu[key] = cpu.get(key, 0.0) + value
    whole = sum(run.get("wall_s", 0.0) for run in runs)
    data_s = sum(v for k, v in commands.items() if k in ("build", "heldout"))
    warm_s = commands.get("warmstart", 0.0)
    step_times: dict[str, list[float]] = {}
    for folder, label, _ in stages:
        for s in summaries[folder].values():
            if s.get("global_step"):
                step_times.setdefault(label, []).append(s["train_runtime_s"] / s["global_step"])
    eval_times = [v for k, v in commands.items() if k.startswith("eval-")]

    lines = [f"# Learning testbed: {config.mode} mode", ""]
    lines += [
        "Written by `training.learn` (do not edit by hand; rerun the command below). It runs the paper's",
        "experiment at laptop scale on CPU, every part through the project's real commands: the build",
        "(`python -m mrtasks.build --source synthetic:arith:...`, default annotator and checks), a tiny",
        "warm-started Qwen decoder, `python -m training.run` with the `training/recipes/learn/` recipes, and",
        "`python -m eval.run` on held-out problems.",
        "",
        f"Command: `{command}`" + {"default": " (`make learn`)", "full": " (`make learn FULL=1`)"}.get(config.mode, ""),
        "",
        f"Written {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} on {machine(os.cpu_count(), last.get('gpu'))};",
        f"load average at start {_load(last.get('loadavg_start'))}, at end {_load(last.get('loadavg_end'))}"
        f" ({last.get('jobs', '?')} jobs at a time, {last.get('threads_per_job', '?')} torch thread(s) each).",
        "",
    ]
    lines += ["## Summary", ""]
    lines += _summary_lines(config, verdict, evals, labels, rise_ok, above_ok if evals else None)
    lines += ["", "## Setup", ""]
    params = warm.get("parameters")
    from training.config import RECIPES_DIR, load_recipe_file
    from training.learn import RECIPE

    recipe = load_recipe_file(RECIPES_DIR / RECIPE / "base.yaml")
    counts = (build.get("counts") or build.get("rows") or {})
    lines += _table(["what", "value"], [
        ["data", f"`synthetic:arith` difficulty {config.difficulty}, families {config.families}, "
                 f"{config.train_problems} problems generated "
                 f"(seed {config.data_seed}), validation fraction {config.validation_fraction}"],
        ["build rows", _counts(counts)],
        ["held-out problems", f"{record.get('disjoint', {}).get('heldout_problems', config.heldout_problems)}, "
                              f"none shared with the {record.get('disjoint', {}).get('build_problems', '?')} build problems (checked)"],
        ["model", f"Qwen3 decoder (Qwen2's layout, see `training/learn_model.py`), {config.layers} layers, hidden "
                  f"{config.hidden_size}, vocabulary ≤ {config.vocab_size} (BPE trained on the build's train split, "
                  f"a whole number one token), {params / 1e6:.2f}M parameters, the Qwen2.5 chat template" if params else "n/a"],
        ["warm start", f"TRL SFTTrainer, {config.sft_epochs:g} epochs, lr {config.sft_learning_rate:g}, "
                       f"{warm.get('steps', '?')} steps on {_counts(warm.get('examples', {}))}; loss "
                       f"{_num(warm.get('loss_first'))} → {_num(warm.get('loss_last'))}"
                       + (f"; then answers without work added, {config.sft_direct_epochs:g} epoch(s) at lr "
                          f"{config.sft_direct_learning_rate:g}, {direct.get('steps', '?')} steps on "
                          f"{_counts(direct.get('examples', {}))}; loss {_num(direct.get('loss_first'))} → "
                          f"{_num(direct.get('loss_last'))}" if (direct := warm.get("direct_pass")) else "")],
        ["GRPO", f"`training/recipes/learn/`: {recipe.get('rollout_batch_prompts')} prompts × "
                 f"{recipe.get('num_generations')} rollouts per step, lr {recipe.get('learning_rate'):g}, "
                 f"Stage I {config.stage1_steps} steps, "
                 + (f"Stage II / baseline {config.stage2_steps} steps, " if config.stage2 or config.baseline else "")
                 + f"seeds {', '.join(map(str, config.seeds))}"
                 + (f"; overrides {' '.join(config.extra_overrides)}" if config.extra_overrides else "")],
        ["evaluation", f"`eval.run --backend transformers`, n = {config.eval_n}, temperature 0.6, top-p 0.95, "
                       f"{config.eval_max_new_tokens} new tokens, the outcome prompt" if config.evaluate else "none (quick mode)"],
    ])
    lines += ["", "## Reward curves", "",
              f"![reward curves]({reward_png.name})", "",
              f"Rise check (mean reward over the last fifth of a stage's steps minus its first fifth, ≥ {RISE}):", ""]
    lines += _table(["stage", "seed", "steps", "first fifth", "last fifth", "rise", f"≥ {RISE}",
                     "KL to the start, last fifth"], rise_rows)
    if fixed:
        lines += ["", "## Fixed-batch check: can each reward be learned at all?", "",
                  f"Each reward's task trained from the warm start on its first {config.fixed_batch_prompts} training "
                  f"prompts only (one step's worth, seen every step), {config.fixed_batch_steps} steps, seed 1, the same "
                  "recipe otherwise. A reward that a model cannot learn to earn even on prompts it sees at every step "
                  "is broken (the `process` fault of the last review would stay flat at 0 here) or out of reach at this "
                  "scale; one it learns here but not over the whole training set (above) does teach, and what the full "
                  "runs lack is generalization across problems in their steps.", "",
                  f"![fixed-batch reward curves]({fixed_png.name})" if fixed_png else "", ""]
        lines += _table(["reward", "steps", "first fifth", "last fifth", "rise", f"≥ {RISE}", "groups all-equal"],
                        fixed_rows)
    lines += ["", "## Groups with no gradient", "",
              "Share of GRPO groups (8 rollouts of one prompt) whose rewards are all equal, so their advantages are",
              "zero (TRL's `frac_reward_zero_std`), mean ± std over seeds (min–max), in %:", "",
              f"![zero-variance groups]({zero_png.name})", ""]
    lines += _table(["stage", "first fifth", "last fifth", "all steps"], zero_rows)
    if evals:
        lines += ["", "## Pass@k on the held-out problems", "",
                  "Mean ± std over seeds (min–max), in %; the warm start is one model. The whole curve k = 1..64 is in",
                  "each `summary.json` and the plot.", "", f"![Pass@k]({passk_png.name})" if passk_png else "", ""]
        lines += _table(["model", *[f"Pass@{k}" for k in ks]], passk_rows)
        if control:
            lines += ["", control["text"], ""]
            lines += _table(["model", *[f"Pass@{k}" for k in ks]], control["rows"])
        lines += ["", "Pass@1 after RL against the warm start's:", ""]
        lines += _table(["arm", "seed", "Pass@1", "warm start", "gain", "above"], above_rows)
        if comparisons:
            lines += ["", "MR-RLVR minus the GRPO baseline, paired by seed (points of Pass@k):", ""]
            lines += _table(["arm", "Pass@1", "Pass@8", f"Pass@{ks[-1]}"], comparisons)
        if work:
            lines += ["", "### Right answers, right work?", "",
                      "The outcome reward pays a right final answer however it was reached. Of the evaluation's samples",
                      "(all n per problem), the share with the right answer, the share with the right answer and no false",
                      "one-operation fact in the work (`5 - 4 = 6`; `mrtasks.curate.synthetic.arithmetic_slips`), and the",
                      "share of right answers whose work holds such a slip; then the share of samples that answer",
                      "without work (an empty `<think></think>`) and the accuracy of those and of the worked ones;",
                      "mean ± std over seeds, in %:", ""]
            lines += _table(["model", "right answer (Pass@1)", "right answer, no slip", "right answers with a slip",
                             "answers without work", "right, without work", "right, with work"], work)
    lines += ["", "## Time", ""]
    time_rows = [["whole run" + (f" ({len(runs)} invocations, resumed)" if len(runs) > 1 else ""), _minutes(whole)],
                 ["data (build, held-out file)", _minutes(data_s)],
                 ["warm start (tokenizer, model, SFT)", _minutes(warm_s)],
                 ["RL and evaluation (jobs in parallel) and the rest", _minutes(whole - data_s - warm_s)]]
    for label, ts in step_times.items():
        time_rows.append([f"GRPO step, {label}", f"{statistics.fmean(ts):.1f} s (mean over seeds)"])
    if eval_times:
        time_rows.append([f"one evaluation (n = {config.eval_n})",
                          f"{statistics.fmean(eval_times):.0f} s (mean over {len(eval_times)})"])
    if cpu:
        total = sum(cpu.values())
        time_rows.append(["CPU time of every command (user + system, all cores)",
                          f"{_minutes(total)}: about {_minutes(total / max(1, last.get('cores') or 1))} of "
                          f"wall time on {last.get('cores')} idle cores"])
        for prefix, what in (("warmstart", "warm start"), ("eval-", "one evaluation")):
            vals = [v for k, v in cpu.items() if k.startswith(prefix)]
            if vals:
                time_rows.append([f"CPU time, {what}", f"{statistics.fmean(vals):.0f} s (mean over {len(vals)})"])
    lines += _table(["phase", "wall time"], time_rows)
    if runs:
        loads = "; ".join(f"{_load(r.get('loadavg_start'))} → {_load(r.get('loadavg_end'))}" for r in runs)
        lines += ["", f"Load average (1, 5, 15 min) at the start and end of each invocation: {loads}. On a shared "
                      "machine the wall times above are longer than on an idle one."]
    lines += ["", "Every command's wall time and log: `OUT/timings.json`, `OUT/logs/`."]
    lines += ["", "## What this shows and what it cannot", ""] + _honest(config, verdict, evals)
    report.write_text("\n".join(lines).rstrip() + "\n")
    (paths.out / "learn_verdict.json").write_text(json.dumps(verdict, indent=2, default=str) + "\n")
    return verdict


def _right_work(paths: Any, models: dict[str, Any], labels: dict[str, str]) -> tuple[list[list[str]], dict[str, Any]]:
    """Per model: the share of evaluation samples with the right answer, with the right answer and no
    arithmetic slip in the work, the share of right answers with a slip, the share of samples that
    answer without work, and the accuracy of those and of the worked ones (table rows, and the means by
    model label)."""
    from mrtasks.curate.synthetic import arithmetic_slips
    from training.learn import WARM_START, eval_name
    from training.learn_model import without_work

    folders = {WARM_START: [WARM_START], **{arm: [eval_name(arm, s) for s in by_seed] for arm, by_seed in models.items()}}
    rows: list[list[str]] = []
    means: dict[str, Any] = {}
    for arm, names in folders.items():
        shares: dict[str, list[float]] = {k: [] for k in
                                          ("right", "right_no_slip", "slip_share_of_right", "direct", "direct_right", "work_right")}
        for name in names:
            samples = read_jsonl(paths.eval_dir(name) / "samples.jsonl")
            if not samples:
                return [], {}  # no samples kept: no such table
            ok = [s for s in samples if s.get("correct")]
            bad = sum(1 for s in ok if arithmetic_slips(s.get("completion", "")))
            direct = [s for s in samples if without_work(s.get("completion", ""))]
            worked = len(samples) - len(direct)
            direct_ok = sum(1 for s in direct if s.get("correct"))
            shares["right"].append(len(ok) / len(samples))
            shares["right_no_slip"].append((len(ok) - bad) / len(samples))
            shares["slip_share_of_right"].append(bad / len(ok) if ok else float("nan"))
            shares["direct"].append(len(direct) / len(samples))
            shares["direct_right"].append(direct_ok / len(direct) if direct else float("nan"))
            shares["work_right"].append((len(ok) - direct_ok) / worked if worked else float("nan"))
        rows.append([labels[arm], *(fmt_spread(v) for v in shares.values())])
        means[labels[arm]] = {k: spread(v)[0] for k, v in shares.items()}
    return rows, means


def _range(shares: Sequence[float]) -> str:
    """`27%` or `25-31%`: the span of some shares, in whole percent."""
    shares = [v for v in shares if not math.isnan(v)] or [float("nan")]
    lo, hi = (f"{100 * v:.0f}" for v in (min(shares), max(shares)))
    return f"{lo}%" if lo == hi else f"{lo}-{hi}%"


def _load(values: Any) -> str:
    return ", ".join(f"{v:.1f}" for v in values) if values else "n/a"


def _num(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _counts(counts: dict[str, Any]) -> str:
    if not counts:
        return "n/a"
    parts = []
    for name, value in counts.items():
        if isinstance(value, dict):
            value = value.get("train", sum(v for v in value.values() if isinstance(v, int)))
        parts.append(f"{name} {value}")
    return ", ".join(parts)


def _control(config: Any, paths: Any, warm: dict[int, float], ks: list[int], name: str, benchmark: str) -> dict[str, Any] | None:
    """The pipeline control against the warm start: rows of the Pass@k table, the verdict and its words."""
    summary_path = paths.eval_dir(name) / "summary.json"
    if not getattr(config, "control_steps", 0) or not summary_path.is_file():
        return None
    curve = eval_curve(read_json(summary_path), benchmark)
    equal = bool(curve) and all(abs(curve.get(k, float("nan")) - warm.get(k, float("nan"))) < 1e-9 for k in ks)
    text = (f"Pipeline control: the baseline's recipe run from the warm start with learning rate 0 "
            f"({config.control_steps} steps), saved and evaluated like every arm, scores "
            + ("**exactly as the warm start** at every k: saving, loading and evaluating a trained model changes "
               "nothing, so every gap between an arm and the warm start above is the training's."
               if equal else
               "**differently from the warm start** although its weights are the same: saving, loading or "
               "evaluating a trained model changes its scores, so the gaps above are not the training's alone "
               "(compare the two models' `config.json`, `generation_config.json` and tokenizer files)."))
    rows = [["warm start (SFT)", *[pct(warm.get(k, float("nan"))) for k in ks]],
            ["control (learning rate 0)", *[pct(curve.get(k, float("nan"))) for k in ks]]]
    return {"equal": equal, "text": text, "rows": rows, "pass1": curve.get(1, float("nan"))}


def _summary_lines(config: Any, verdict: dict[str, Any], evals: dict[str, Any], labels: dict[str, str],
                   rise_ok: bool, above_ok: bool | None) -> list[str]:
    lines = [f"- Reward rise ≥ {RISE} from the first to the last fifth of every stage, every seed: "
             f"**{'yes' if rise_ok else 'no'}** (table below)."]
    if verdict.get("fixed_batch") is not None:
        rises = ", ".join(f"{k} {v['rise']:+.3f}" for k, v in verdict.get("fixed_batch_rises", {}).items())
        lines.append(f"- Fixed-batch check (each reward on {config.fixed_batch_prompts} prompts seen every step), rise ≥ "
                     f"{RISE} for every reward: **{'yes' if verdict['fixed_batch'] else 'no'}** ({rises}).")
    if verdict.get("control") is not None:
        lines.append("- Pipeline control (learning rate 0) scores exactly as the warm start: "
                     f"**{'yes' if verdict['control'] else 'no'}**.")
    if above_ok is not None:
        lines.append(f"- Held-out Pass@1 after RL above the warm start's ({pct(verdict['warm_start_pass1'])}%) in every "
                     f"arm and seed: **{'yes' if above_ok else 'no'}**.")
    for key, value in verdict.items():
        if key.startswith("pass1_gain:"):
            arm = key.split(":", 1)[1]
            per_seed = verdict.get(f"pass1_gain_per_seed:{arm}", [])
            better = sum(d > 0 for d in per_seed)
            lines.append(f"- {labels[arm]} against the GRPO baseline: Pass@1 {100 * value:+.1f} points (mean of the "
                         f"per-seed differences; better in {better} of {len(per_seed)} seeds).")
    return lines


def _short_of_margin(reward: str, r: dict[str, Any]) -> str:
    """Why a fixed-batch run stayed under the margin, as its curve and zero-variance share say."""
    zero = r.get("zero_std_mean", float("nan"))
    if r["rise"] >= RISE / 3:
        return (f"{reward} rose by {r['rise']:+.3f} in {r['steps']} steps ({100 * zero:.0f}% of groups all-equal), "
                "short of the margin: it is learned, more slowly than the margin asks at this learning rate (see "
                "its curve).")
    if not zero < 0.5:  # also NaN: no record
        return (f"{reward} gave almost no gradient ({100 * zero:.0f}% of groups all-equal): for this model it is out of "
                "reach, not learnable from its own samples.")
    return (f"{reward} did not rise ({r['rise']:+.3f}) although its groups varied ({100 * zero:.0f}% all-equal): "
            "a reward that does not reward what it should is the first thing to check.")


def _honest(config: Any, verdict: dict[str, Any], evals: dict[str, Any]) -> list[str]:
    gains = {k.split(":", 1)[1]: v for k, v in verdict.items() if k.startswith("pass1_gain:")}
    zero_note = ("A reward that silently scored 0.0 everywhere (the `process` fault of the last review) would "
                 "leave its curve flat at 0 and every group zero-variance here.")
    if verdict.get("rise"):
        text = ["This run shows that the reward signals of this project teach a model through the real training "
                "path: rewards computed by `mrtasks.rewards` inside TRL's GRPOTrainer move the policy, stage by "
                "stage, by at least the rise asked for in every seed, and the evaluation path grades the result. "
                + zero_note, ""]
    else:
        flat = [f"{label} (seed {seed})" for label, seed, ok in verdict.get("rise_per_stage", []) if not ok]
        text = ["Not every reward curve rose by the margin asked for: " + ", ".join(flat) + ". The curves and the "
                "zero-variance shares above say whether such a stage had a signal at all (rewards that vary within "
                "groups) and did not move the policy far enough in its steps, or had none. " + zero_note, ""]
    fixed = verdict.get("fixed_batch_rises", {})
    if fixed:
        learned = [k for k, v in fixed.items() if v["ok"]]
        unlearned = [k for k, v in fixed.items() if not v["ok"]]
        text += [("On a fixed batch of prompts seen at every step the model did learn to earn "
                  + (", ".join(learned) if learned else "none of the rewards")
                  + (f" (rise ≥ {RISE}); " if learned else "; ")
                  + ("so the reward path works end to end (TRL calls the rewards, their scores move the policy the "
                     "right way), and where the full runs stay flat, what they lack is generalization across problems "
                     "in this many steps. " if learned else "")
                  + " ".join(_short_of_margin(k, fixed[k]) for k in unlearned)), ""]
    if verdict.get("above_warm_start") is False:
        rises = verdict.get("rises", {}).values()
        zero = [r["zero_std_mean"] for r in rises if r.get("zero_std_mean") is not None]
        kl = [r["kl_last_fifth"] for r in rises if r.get("kl_last_fifth") is not None]
        share = statistics.fmean(zero) if zero else float("nan")
        moved = f" (KL to the start {min(kl):.2f}-{max(kl):.2f} in the last fifth)" if kl else ""
        if share >= 0.5:
            why = (f"Most groups were all-equal ({100 * share:.0f}% of groups over every stage and seed), so few steps "
                   f"carried a reward signal while the optimizer still moved the policy{moved}: it drifted from the "
                   "warm start without being taught; more prompts per step or an easier start are what to try first.")
        else:
            why = (f"Most groups did carry a signal (only {100 * share:.0f}% of groups all-equal over every stage and "
                   f"seed) and the policy moved{moved}, but the reward did not climb: with this many prompts per step "
                   "and steps per stage the policy gradient's noise outweighs its drift toward better answers at this "
                   "learning rate, so the moves cost held-out accuracy instead; more prompts per step and more steps "
                   "(GPU time, not this CPU budget) are what to try first.")
        control = {True: " The pipeline control rules out the other explanation, a fault in saving, loading or "
                          "evaluating a trained model: with learning rate 0 the same path scores exactly as the warm start.",
                   False: " The pipeline control did not reproduce the warm start's scores, so part of the drop may be "
                          "a fault in that path rather than the training (see above)."}.get(verdict.get("control"), "")
        text += ["Held-out Pass@1 after RL is not above the warm start's in every arm and seed (table above). " + why
                 + control, ""]
    work = verdict.get("right_work") or {}
    start = work.get("warm start (SFT)")
    if start and not math.isnan(start["slip_share_of_right"]):
        after = [v["slip_share_of_right"] for k, v in work.items() if k != "warm start (SFT)"]
        text += [f"What the outcome reward pays for: {100 * start['slip_share_of_right']:.0f}% of the warm start's right "
                 "answers on the held-out problems come from work with a false arithmetic fact in it (a slip before "
                 "the answer, or in a check after it), and "
                 f"{100 * start['right_no_slip']:.1f}% of its samples are right with clean work"
                 + (f"; after RL the slip share of right answers is {_range(after)}" if after else "")
                 + ". A reward of 1 reinforces a lucky completion as much as a careful one; that is the weakness of "
                 "outcome-only rewards that the paper's process-level Stage I tasks are meant to address.", ""]
    if start and start.get("direct", 0) > 0.05:
        after = {k: v for k, v in work.items() if k != "warm start (SFT)"}
        text += [f"What RL learned here: the warm start answers without work in {100 * start['direct']:.0f}% of its "
                 f"held-out samples (right in {100 * start['direct_right']:.0f}% of those, in "
                 f"{100 * start['work_right']:.0f}% of its worked ones), because its second SFT pass taught it to "
                 "(`sft_direct_share`, as a chat model's no-think mode)"
                 + ("; after RL the share without work is "
                    + ", ".join(f"{100 * v['direct']:.0f}% ({k})" for k, v in after.items())
                    + f", and worked samples are right in {_range([v['work_right'] for v in after.values()])}"
                    if after else "")
                 + ". So the Stage II gain in this testbed is "
                 + ("mostly the model learning to work before it answers, a choice made alike on every problem that "
                    "the outcome reward can teach in tens of steps; it is not better arithmetic"
                    if all(v["work_right"] - start["work_right"] < 0.1 for v in after.values()) else
                    "partly the model learning to work before it answers, a choice made alike on every problem, and "
                    "partly better work (worked samples right more often than before)")
                 + ". That is what makes the testbed able to catch a reward or a training path that "
                 "does not teach (the curve must rise), and what it cannot measure is the finer, per-problem learning "
                 "the paper's Stage I is about.", ""]
    if gains:
        best = max(gains.values())
        caveat = ("With this few seeds and held-out problems a difference of a few points is within the seed-to-seed "
                  "spread shown above, so it is evidence of at most a small effect, in either direction."
                  if abs(best) < 0.05 else "The per-seed differences above say how consistent it is.")
        text += [
            "On the paper's claim (Stage I self-supervision before outcome RL helps): here MR-RLVR's Pass@1 differs "
            "from the baseline's by " + ", ".join(f"{100 * v:+.1f} points ({t})" for t, v in gains.items())
            + ", averaged over the paired seeds. " + caveat,
            "",
        ]
    text += [
        "What it cannot show: the paper's Table 1 is about 1.5-3B models trained for hours on real competition",
        "math; here a few-million-parameter model learns templated arithmetic written by a generator, for",
        "tens of GRPO steps. The held-out problems are disjoint from training but come from the same generator,",
        "so they measure in-distribution generalization only, and the sizes, steps and learning rate were",
        "chosen on this machine (from training-reward curves and the build's validation split, never the",
        "held-out file). Whether Stage I",
        "transfers to outcome accuracy at scale depends on what a large model can learn from filling formulas",
        "or ordering steps that it cannot already do, which a model this small cannot answer.",
    ]
    return text
