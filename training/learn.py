"""The CPU learning testbed: does the reward signal teach a model anything, through the real path?

    python -m training.learn            # default mode: warm start, GRPO baseline, MR-RLVR (masked_then_fill), 3 seeds
    python -m training.learn --full     # also step_reordering and error_correction as Stage I
    python -m training.learn --quick    # one seed, Stage I only, small sizes: the slow test

One command runs the same experiment as the paper's Table 1 at laptop scale, every part through
the project's real commands (as subprocesses, logs under `OUT/logs/`):

1. `python -m mrtasks.build --source synthetic:arith:...` (default annotator, filters, integrity
   checks) and `python -m mrtasks.curate.synthetic` for held-out problems; the held-out problems
   are checked to share no problem with the build (either split);
2. `python -m training.learn_model`: a BPE tokenizer and a small Qwen decoder (Qwen3 layout) with the Qwen2.5 chat
   template, warm-started with TRL's SFTTrainer on the build's training problems;
3. `python -m training.run --recipe learn` (`training/recipes/learn/`): per seed the GRPO baseline
   (`--stage baseline`) and MR-RLVR (`--stage all --task T`: Stage I on T, then Stage II from its
   weights, as many Stage II steps as the baseline);
4. the fixed-batch check: each arm's reward trained on a few prompts seen at every step (can the
   model learn to earn it at all?);
5. `python -m eval.run --backend transformers` on the held-out problems, n = 64, for the warm
   start and every trained model;
6. the report (`training.learn_report`): `docs/learning.md` and its PNGs.

Jobs (one seed's arm, then its evaluation) run `--jobs` at a time, each with
`cores / jobs` torch threads. A rerun of the same command resumes: finished phases, stages and
evaluations are kept (`--fresh` starts over); `--full` in a default run's folder adds only the
other Stage I arms (every other job is the same). Exit codes: 0 done, 1 a phase failed (the message
names its log), 2 bad arguments or an `--out` holding a run with other settings.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mrtasks.tasks import ERROR_CORRECTION, MASKED_THEN_FILL, STEP_REORDERING

logger = logging.getLogger("training.learn")

RECIPE = "learn"
STAGE1_ARMS_DEFAULT = (MASKED_THEN_FILL,)
STAGE1_ARMS_FULL = (MASKED_THEN_FILL, STEP_REORDERING, ERROR_CORRECTION)
BASELINE = "grpo_baseline"
WARM_START = "warmstart"
CONTROL = "control"
HELDOUT_NAME = "synthetic"
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class LearnError(Exception):
    """A phase failed; the message names it and its log."""


@dataclass(frozen=True)
class LearnConfig:
    """Every setting of a testbed run (recorded in `OUT/learn_config.json`; a rerun must match it).

    Sizing (measured from a fresh start on a quiet 2-core machine, 2 jobs of 1 torch thread): the
    SFT warm start (712 worked steps of 16 and 172 with answers without work, 2 threads) 7.2 min; a
    GRPO step of 8 prompts x 8 rollouts 4.4-4.6 s in Stage I (masked_then_fill) and Stage II alike;
    one evaluation (32 problems x 64 samples) 58-61 s; the pipeline control about 1.3 min. The
    default mode takes about 25 min in all.
    """

    mode: str = "default"
    train_problems: int = 1000
    """Problems the synthetic source generates for the build (train + validation splits)."""
    heldout_problems: int = 32
    difficulty: int = 1
    families: str = "expr+linear+mod"
    """`series` holds too few distinct problems at difficulty 1 (mrtasks.curate.synthetic); a warm start
    of this size solves almost no `system` problem (0 of 13 validation problems greedily), so its
    groups would carry no reward signal and only slow every step."""
    data_seed: int = 0
    validation_fraction: float = 0.1
    seeds: tuple[int, ...] = (1, 2, 3)
    arms: tuple[str, ...] = STAGE1_ARMS_DEFAULT
    """Stage I tasks, one MR-RLVR arm each (the GRPO baseline always runs)."""
    baseline: bool = True
    stage2: bool = True
    """False (quick mode): Stage I only."""
    stage1_steps: int = 30
    stage2_steps: int = 30
    vocab_size: int = 2048
    hidden_size: int = 192
    layers: int = 4
    sft_epochs: float = 8.0
    sft_learning_rate: float = 2e-3
    sft_stage1_share: float = 0.2
    sft_direct_share: float = 0.6
    """The warm start's second SFT pass with answers without work (`WarmStartConfig.direct_share`): it
    answers at once in about half its samples, and what Stage II can teach across problems in 30 steps
    is to work first. Chosen on the build's validation split (96 problems x 8 samples, baseline seed 1),
    never the held-out file: from 8 worked epochs alone (T=1.0 accuracy 0.57) 30 GRPO steps at lr 5e-5 had
    raised the training reward by under 0.03; after this pass (0.24) 30 at lr 1e-4 by 0.19, to 0.50 on
    validation at T=1.0 (see the learn recipes for the learning rate)."""
    sft_direct_epochs: float = 1.0
    sft_direct_learning_rate: float = 2e-4
    fixed_batch_prompts: int = 8
    """The fixed-batch check: each arm's reward trained from the warm start on this many training
    prompts only (one step's worth, seen every step; seed 1). A reward the model cannot learn to earn
    even there is broken or out of reach at this scale; one it learns there but not on the whole set
    teaches, and what the full runs lack is generalization across problems. 0 skips the check."""
    fixed_batch_steps: int = 30
    control_steps: int = 2
    """The pipeline control: the baseline's recipe from the warm start with learning rate 0 for this
    many steps, saved and evaluated like every arm. Its weights are the warm start's and the evaluation
    is seeded, so its Pass@k must equal the warm start's to the digit: a gap between an arm and the
    warm start is then the training's, not the save, load or evaluation path's. 0 skips it (so does a
    run without evaluation)."""
    eval_n: int = 64
    eval_max_new_tokens: int = 160
    evaluate: bool = True
    extra_overrides: tuple[str, ...] = field(default_factory=tuple)
    """`key=value` recipe overrides passed to every `training.run`."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _gpu_name() -> str | None:
    """The CUDA device the GRPO steps ran on (TRL places them there when one is present), or None."""
    try:
        import torch
    except ImportError:
        return None
    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None


def mode_config(mode: str) -> LearnConfig:
    """The settings of `default`, `full` (every Stage I task) or `quick` (one seed, Stage I only)."""
    if mode == "default":
        return LearnConfig()
    if mode == "full":
        return LearnConfig(mode="full", arms=STAGE1_ARMS_FULL)
    if mode == "quick":
        return LearnConfig(mode="quick", train_problems=400, seeds=(1,), baseline=False, stage2=False,
                           stage1_steps=16, fixed_batch_steps=16, hidden_size=128, sft_epochs=2.0, sft_direct_share=0.0,
                           evaluate=False)
    raise ValueError(f"unknown mode {mode!r}")


# --- running commands ----------------------------------------------------------------------------


@dataclass
class Runner:
    """Runs project commands as subprocesses with their logs in `logs`, timing each."""

    root: Path
    logs: Path
    threads: int
    timings: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)
    """CPU seconds (user + system) of each command and its children: on a shared machine the wall
    time says little, the CPU time what an idle one would need."""

    def env(self, threads: int) -> dict[str, str]:
        env = dict(os.environ)
        env.update({
            "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads), "TOKENIZERS_PARALLELISM": "false",
            # Idle OpenMP threads sleep instead of spinning: with two threads on a shared machine the
            # spinning ones took a core from the other job (SFT 10x slower at a load of 4).
            "OMP_WAIT_POLICY": "PASSIVE",
            "MRTASKS_REWARD_WORKERS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
            "HF_HUB_DISABLE_TELEMETRY": "1", "HF_DATASETS_DISABLE_PROGRESS_BARS": "1", "TQDM_DISABLE": "1",
            "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1", "PYTHONWARNINGS": "ignore::FutureWarning",
        })
        path = env.get("PYTHONPATH", "")
        if str(self.root) not in path.split(os.pathsep):
            env["PYTHONPATH"] = os.pathsep.join(p for p in (str(self.root), path) if p)
        return env

    def run(self, name: str, argv: list[str], threads: int | None = None) -> float:
        """Run `python -m ...argv` to completion; raise LearnError naming the log on failure."""
        log = self.logs / f"{name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, *argv]
        logger.info("[%s] %s", name, " ".join(argv))
        start = time.monotonic()
        with log.open("a") as f:
            f.write(f"$ {' '.join(cmd)}\n")
            f.flush()
            proc = subprocess.Popen(cmd, cwd=self.root, env=self.env(threads or self.threads), stdout=f,
                                    stderr=subprocess.STDOUT)
            try:
                _, status, usage = os.wait4(proc.pid, 0)
            except BaseException:
                proc.kill()
                proc.wait()
                raise
            proc.returncode = code = os.waitstatus_to_exitcode(status)
        elapsed = time.monotonic() - start
        self.timings[name] = round(self.timings.get(name, 0.0) + elapsed, 1)
        self.cpu[name] = round(self.cpu.get(name, 0.0) + usage.ru_utime + usage.ru_stime, 1)
        if code != 0:
            tail = log.read_text(errors="replace").strip().splitlines()[-1:] or [""]
            raise LearnError(f"{name} exited with {code} (log: {log}): {tail[0][:200]}")
        logger.info("[%s] done in %.0f s", name, elapsed)
        return elapsed


# --- the experiment ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Paths:
    out: Path

    @property
    def dataset(self) -> Path:
        return self.out / "tasks"

    @property
    def heldout(self) -> Path:
        return self.out / "heldout.jsonl"

    @property
    def warm_start(self) -> Path:
        return self.out / WARM_START

    def run_root(self, seed: int) -> Path:
        return self.out / "runs" / f"seed{seed}"

    @property
    def fixed_batch(self) -> Path:
        return self.out / "runs" / "fixed_batch"

    @property
    def control(self) -> Path:
        return self.out / "runs" / CONTROL

    def eval_dir(self, name: str) -> Path:
        return self.out / "eval" / name


def eval_name(arm: str, seed: int) -> str:
    """The evaluation folder of an arm (`grpo_baseline`, `mr_rlvr:<task>`) in a seed: `seed1-grpo_baseline`,
    `seed1-mr_rlvr_<task>` (under `OUT/eval/`)."""
    return f"seed{seed}-{arm if arm == BASELINE else arm.replace('mr_rlvr:', 'mr_rlvr_', 1)}"


def arm_models(config: LearnConfig, paths: Paths) -> dict[str, dict[int, Path]]:
    """The final model of every arm and seed: `grpo_baseline`, `mr_rlvr:<task>` (Stage II after Stage
    I on the task; Stage I's own model in quick mode)."""
    models: dict[str, dict[int, Path]] = {}
    for seed in config.seeds:
        root = paths.run_root(seed)
        if config.baseline:
            models.setdefault(BASELINE, {})[seed] = root / BASELINE
        for task in config.arms:
            final = root / (f"stage2_{task}" if config.stage2 else f"stage1_{task}")
            models.setdefault(f"mr_rlvr:{task}", {})[seed] = final
    return models


def check_disjoint(paths: Paths) -> dict[str, int]:
    """Assert that no held-out problem is a problem of the build (train or validation split)."""
    from datasets import load_dataset

    from mrtasks.curate.filters import normalize_problem
    from mrtasks.curate.synthetic import is_heldout
    from mrtasks.jsonl import iter_jsonl
    from mrtasks.trajectory import TRAJECTORIES

    built = load_dataset(str(paths.dataset), TRAJECTORIES)
    train = {normalize_problem(p) for split in built.values() for p in split["problem"]}
    heldout = [row["problem"] for _, row in iter_jsonl(paths.heldout)]
    shared = [p for p in heldout if normalize_problem(p) in train]
    if shared:
        raise LearnError(f"{len(shared)} held-out problem(s) also in the build, e.g. {shared[0]!r}")
    if not all(is_heldout(p) for p in heldout):
        raise LearnError("a held-out problem lies outside the held-out partition")
    return {"build_problems": len(train), "heldout_problems": len(heldout), "shared": 0}


def run_argv(paths: Paths, output_dir: Path, stage: list[str], *overrides: str) -> list[str]:
    """`training.run` on the testbed's build with the `learn` recipe: options first, then every key=value
    override together (argparse takes one run of positionals; a later key wins)."""
    return ["-m", "training.run", "--recipe", RECIPE, "--dataset", str(paths.dataset), "--output-dir", str(output_dir),
            *stage, *overrides]


def stage_argvs(config: LearnConfig, paths: Paths, seed: int, arm: str) -> list[tuple[str, list[str]]]:
    """(job name, argv) of the training commands of one arm and seed, in order."""
    def argv(stage: list[str], *overrides: str) -> list[str]:
        return run_argv(paths, paths.run_root(seed), stage, f"seed={seed}", *overrides, *config.extra_overrides)

    warm = f"model_name_or_path={paths.warm_start}"
    if arm == BASELINE:
        return [(f"seed{seed}-{BASELINE}", argv(["--stage", "baseline"], warm, f"max_steps={config.stage2_steps}"))]
    jobs = [(f"seed{seed}-stage1_{arm}", argv(["--stage", "1", "--task", arm], warm, f"max_steps={config.stage1_steps}"))]
    if config.stage2:
        # Stage II reads Stage I's final save under the same --output-dir (training.run's --stage 2).
        jobs.append((f"seed{seed}-stage2_{arm}", argv(["--stage", "2", "--task", arm], f"max_steps={config.stage2_steps}")))
    return jobs


def fixed_batch_argvs(config: LearnConfig, paths: Paths) -> list[tuple[str, list[str]]]:
    """(job name, argv) of the fixed-batch check: every arm's Stage I task, and the outcome reward
    when the baseline runs, each on the first `fixed_batch_prompts` training prompts."""
    if not config.fixed_batch_prompts:
        return []
    stages = [(arm, ["--stage", "1", "--task", arm]) for arm in config.arms]
    if config.baseline:
        stages.append((BASELINE, ["--stage", "baseline"]))
    return [(f"fixed_batch-{name}", run_argv(paths, paths.fixed_batch, stage, "seed=1", f"model_name_or_path={paths.warm_start}",
                                             f"max_steps={config.fixed_batch_steps}",
                                             f"max_train_samples={config.fixed_batch_prompts}", *config.extra_overrides))
            for name, stage in stages]


def control_argvs(config: LearnConfig, paths: Paths) -> list[tuple[str, list[str]]]:
    """(job name, argv) of the pipeline control: the baseline with learning rate 0, then its evaluation."""
    if not (config.control_steps and config.evaluate):
        return []
    train = run_argv(paths, paths.control, ["--stage", "baseline"], "seed=1", f"model_name_or_path={paths.warm_start}",
                     *config.extra_overrides, "learning_rate=0.0", f"max_steps={config.control_steps}")
    return [(CONTROL, train), (f"eval-{CONTROL}", eval_argv(config, paths, paths.control / BASELINE, CONTROL))]


def eval_argv(config: LearnConfig, paths: Paths, model: Path, name: str) -> list[str]:
    return ["-m", "eval.run", "--model", str(model), "--benchmarks", f"{HELDOUT_NAME}={paths.heldout}",
            "--backend", "transformers", "--device", "cpu", "--dtype", "float32",
            "--n", str(config.eval_n), "--k", *[str(k) for k in passk_ks(config.eval_n)],
            "--max-new-tokens", str(config.eval_max_new_tokens), "--problems-per-call", "4",
            "--batch-size", str(4 * config.eval_n), "--output-dir", str(paths.eval_dir(name))]


def passk_ks(n: int) -> list[int]:
    ks, k = [], 1
    while k <= n:
        ks.append(k)
        k *= 2
    return ks


def check_overrides(config: LearnConfig, root: Path) -> str | None:
    """Why the recipe overrides would fail every `training.run` job (its one error line), or None:
    each recipe the run uses goes through `training.run --dry-run` first (a few seconds, nothing
    written), not after the build, the warm start and an evaluation."""
    if not config.extra_overrides:
        return None  # the bundled recipes: tests/test_learn.py dry-runs them
    stages = [["--stage", "all" if config.stage2 else "1", "--task", arm] for arm in config.arms]
    stages += [["--stage", "baseline"]] if config.baseline else []
    with tempfile.TemporaryDirectory(prefix="mrtasks-learn-") as tmp:
        for stage in stages:
            cmd = [sys.executable, "-m", "training.run", "--recipe", RECIPE, "--output-dir", str(Path(tmp) / "run"),
                   *stage, "--dry-run", *config.extra_overrides]
            done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                lines = (done.stderr or done.stdout).strip().splitlines() or [f"exit {done.returncode}"]
                return lines[-1].removeprefix("error: ")
    return None


def run_experiment(config: LearnConfig, paths: Paths, runner: Runner, jobs: int) -> dict[str, Any]:
    """Every phase in order; returns what the report needs besides the run folders."""
    phases: dict[str, float] = {}
    record: dict[str, Any] = {"phases": phases}

    start = time.monotonic()
    if not (paths.dataset / "build_stats.json").is_file():
        source = (f"synthetic:arith:size={config.train_problems},difficulty={config.difficulty},"
                  f"seed={config.data_seed},families={config.families}")
        runner.run("build", ["-m", "mrtasks.build", "--source", source, "--out", str(paths.dataset),
                             "--seed", str(config.data_seed), "--validation-fraction", str(config.validation_fraction),
                             "--no-progress"])
    if not paths.heldout.is_file():
        runner.run("heldout", ["-m", "mrtasks.curate.synthetic", str(paths.heldout), "--size",
                               str(config.heldout_problems), "--difficulty", str(config.difficulty),
                               "--seed", str(config.data_seed), "--families", config.families])
    record["disjoint"] = check_disjoint(paths)
    phases["data"] = round(time.monotonic() - start, 1)

    start = time.monotonic()
    if not (paths.warm_start / "warm_start.json").is_file():
        runner.run("warmstart", ["-m", "training.learn_model", "--dataset", str(paths.dataset),
                                 "--out", str(paths.warm_start), "--vocab-size", str(config.vocab_size),
                                 "--hidden-size", str(config.hidden_size), "--layers", str(config.layers),
                                 "--epochs", str(config.sft_epochs), "--learning-rate", str(config.sft_learning_rate),
                                 "--stage1-share", str(config.sft_stage1_share), "--seed", str(config.data_seed),
                                 "--direct-share", str(config.sft_direct_share),
                                 "--direct-epochs", str(config.sft_direct_epochs),
                                 "--direct-learning-rate", str(config.sft_direct_learning_rate),
                                 "--threads", str(runner.threads * jobs)],
                   threads=runner.threads * jobs)
    phases["warm_start"] = round(time.monotonic() - start, 1)

    # One chain per (arm, seed): its training stages, then its evaluation. The warm start's
    # evaluation is a chain of its own, run first (the figure every arm is compared with, early
    # in the logs); then the longest chains first, `jobs` at a time.
    chains: list[tuple[str, list[tuple[str, list[str]]]]] = []
    for seed in config.seeds:
        for arm in (*config.arms, *((BASELINE,) if config.baseline else ())):
            steps = stage_argvs(config, paths, seed, arm)
            name = BASELINE if arm == BASELINE else f"mr_rlvr:{arm}"
            model = arm_models(config, paths)[name][seed]
            if config.evaluate:
                label = eval_name(name, seed)
                steps.append((f"eval-{label}", eval_argv(config, paths, model, label)))
            chains.append((f"seed{seed}-{arm}", steps))
    chains.sort(key=lambda c: -len(c[1]))
    chains += [(name, [(name, argv)]) for name, argv in fixed_batch_argvs(config, paths)]
    if control := control_argvs(config, paths):
        chains.insert(0, (CONTROL, control))
    if config.evaluate:
        chains.insert(0, (f"eval-{WARM_START}", [(f"eval-{WARM_START}", eval_argv(config, paths, paths.warm_start, WARM_START))]))

    def run_chain(chain: tuple[str, list[tuple[str, list[str]]]]) -> None:
        for name, argv in chain[1]:
            if name.startswith("eval-") and (paths.eval_dir(name.removeprefix("eval-")) / "summary.json").is_file():
                continue
            runner.run(name, argv)

    start = time.monotonic()
    errors: list[str] = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run_chain, c) for c in chains]
        for future in futures:
            try:
                future.result()
            except LearnError as e:
                errors.append(str(e))
    phases["rl_and_eval"] = round(time.monotonic() - start, 1)
    if errors:
        raise LearnError("; ".join(errors))
    return record


RECORDED_BEFORE = {"sft_direct_share": 0.0}
"""What a folder written before a setting existed ran with, where that is not the setting's default."""


def same_experiment(recorded: dict[str, Any], current: dict[str, Any]) -> bool:
    """Whether a folder's recorded settings are this run's but for the mode and the set of Stage I
    arms: each arm's stages and evaluation are jobs of their own, so `--full` extends a default run
    (and a default run reports its part of a full one). A setting the record lacks is its default (or
    what `RECORDED_BEFORE` says such folders ran with), so a folder written before a check was added
    gains just that check's jobs on a rerun."""
    defaults = json.loads(json.dumps(LearnConfig().to_dict()))

    def common(settings: dict[str, Any]) -> dict[str, Any]:
        # a setting added since the folder was written counts as its default (the run had no such job)
        return {k: settings.get(k, RECORDED_BEFORE.get(k, default)) for k, default in defaults.items()
                if k not in ("mode", "arms")}

    return common(recorded) == common(current)


def recipes_digest() -> str:
    """sha256 of the `learn` recipes as `training.run` reads them (each merged over what it extends):
    recorded with the settings, so that an edited recipe is never reported over runs of the old one."""
    from training.config import RECIPES_DIR, load_recipe_file

    recipes = {p.name: load_recipe_file(p) for p in sorted((RECIPES_DIR / RECIPE).glob("*.yaml"))}
    return hashlib.sha256(json.dumps(recipes, sort_keys=True, default=str).encode()).hexdigest()


# --- CLI -----------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m training.learn",
        description="The CPU learning testbed: build a synthetic dataset, warm-start a tiny Qwen decoder, run the GRPO "
        "baseline and MR-RLVR arms over several seeds through training.run, evaluate Pass@k with eval.run, "
        "and write a report.",
        epilog="exit codes: 0 done; 1 a phase failed (its log is named); 130 interrupted (rerun to resume); "
               "2 bad arguments (recipe overrides are dry-run first) or an --out holding a "
        "run with other settings (use --fresh)",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--full", action="store_true", help="every Stage I task as an MR-RLVR arm (longer)")
    mode.add_argument("--quick", action="store_true",
                      help="one seed, Stage I (masked_then_fill) only, small sizes, no evaluation (the slow test)")
    p.add_argument("--out", help="working folder (default: outputs/learn, shared by the default and full modes; "
                                 "quick: outputs/learn-quick)")
    p.add_argument("--report", help="report to write (default: docs/learning.md; full: docs/learning-full.md; "
                                    "quick: OUT/learning.md)")
    p.add_argument("--jobs", type=int, default=2, help="commands run at once (default 2)")
    p.add_argument("--cores", type=int, default=os.cpu_count() or 1,
                   help="cores to share among the jobs (torch threads per job = cores / jobs; default: all)")
    p.add_argument("--seeds", type=int, nargs="+", help="RL seeds (default: 1 2 3; quick: 1)")
    p.add_argument("--fresh", action="store_true", help="delete --out first instead of resuming")
    p.add_argument("--report-only", action="store_true", help="only (re)write the report from --out")
    p.add_argument("overrides", nargs="*", metavar="key=value",
                   help="recipe overrides passed to every training.run (e.g. learning_rate=1e-4)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    mode = "full" if args.full else "quick" if args.quick else "default"
    config = mode_config(mode)
    if args.seeds:
        config = dataclasses.replace(config, seeds=tuple(args.seeds))
    if args.overrides:
        config = dataclasses.replace(config, extra_overrides=tuple(args.overrides))
    if args.jobs < 1 or args.cores < 1:
        print("error: --jobs and --cores must be >= 1", file=sys.stderr)
        return EXIT_USAGE
    root = Path(__file__).resolve().parents[1]
    if not args.report_only and (problem := check_overrides(config, root)):
        print(f"error: recipe overrides: {problem}", file=sys.stderr)
        return EXIT_USAGE
    # `--full` shares the default mode's folder: it adds the other Stage I arms to a default run
    # (the warm start, the baseline and the masked_then_fill arm are the same jobs).
    out = Path(args.out or ("outputs/learn-quick" if mode == "quick" else "outputs/learn"))
    if not out.is_absolute():
        out = root / out
    default_report = {"default": root / "docs" / "learning.md", "full": root / "docs" / "learning-full.md",
                      "quick": out / "learning.md"}[mode]
    report = Path(args.report) if args.report else default_report
    paths = Paths(out)
    stamp = out / "learn_config.json"
    if args.fresh and out.exists() and not args.report_only:
        shutil.rmtree(out)
    recipes = recipes_digest()
    if stamp.is_file():
        previous = json.loads(stamp.read_text())
        if not same_experiment(previous, json.loads(json.dumps(config.to_dict()))):
            print(f"error: {out} holds a run with other settings ({stamp}); use --fresh or another --out",
                  file=sys.stderr)
            return EXIT_USAGE
        if previous.get("recipes", recipes) != recipes:  # a folder from before the digest was recorded passes
            print(f"error: {out} holds runs of other `training/recipes/{RECIPE}/` recipes than today's; use --fresh "
                  "or another --out", file=sys.stderr)
            return EXIT_USAGE
    elif args.report_only:
        print(f"error: {out} holds no testbed run", file=sys.stderr)
        return EXIT_USAGE
    out.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps({**config.to_dict(), "recipes": recipes}, indent=2) + "\n")

    jobs = min(args.jobs, args.cores)
    runner = Runner(root=root, logs=out / "logs", threads=max(1, args.cores // jobs))
    timings_path = out / "timings.json"
    timings = json.loads(timings_path.read_text()) if timings_path.is_file() else {"runs": []}
    command = " ".join(["python -m training.learn", *(argv if argv is not None else sys.argv[1:])])
    if not args.report_only:
        started = time.time()
        load_start = os.getloadavg()
        try:
            record = run_experiment(config, paths, runner, jobs)
        except LearnError as e:
            print(f"error: {e}", file=sys.stderr)
            return EXIT_FAILED
        except KeyboardInterrupt:  # the running jobs are killed (Runner.run); finished phases are kept
            print(f"error: interrupted; rerun the same command to resume from {out}", file=sys.stderr)
            return EXIT_INTERRUPTED
        finally:
            timings["runs"].append({
                "command": command, "started": started, "wall_s": round(time.time() - started, 1),
                "mode": config.mode, "arms": list(config.arms), "jobs": jobs, "threads_per_job": runner.threads, "cores": os.cpu_count(),
                "loadavg_start": load_start, "loadavg_end": os.getloadavg(), "commands": runner.timings,
                "cpu_s": runner.cpu, "gpu": _gpu_name(),
            })
            timings_path.write_text(json.dumps(timings, indent=2) + "\n")
        (out / "learn_record.json").write_text(json.dumps(record, indent=2) + "\n")
    from training.learn_report import write_report

    # The report names the command that ran this mode's experiment (a full run in a default run's
    # folder adds an invocation with more arms: the default report is not about it).
    mine = [r for r in timings["runs"] if set(r.get("arms", ())) <= set(config.arms)]
    if args.report_only and mine:
        command = mine[-1]["command"]
    verdict = write_report(config, paths, report, command=command)
    # A check that fails (a flat curve, no gain) is a result the report states, not a failed run.
    logger.info("report written to %s (reward rise in every stage and seed: %s)", report, verdict.get("rise"))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
