"""`python -m training.gpu_smoke` (`make gpu-smoke`): prove the reference training and evaluation run on a GPU.

On a CUDA machine: builds the dataset from the bundled sample, builds tiny local models that carry
the real chat templates and special tokens of Qwen2.5 and DeepSeek-R1-Distill-Qwen
(`training/chat_templates/`), runs Stage I then Stage II of each paper recipe in separate processes
(bf16 autocast over fp32 weights; vLLM colocate when vLLM imports, else transformers generation;
DeepSpeed ZeRO-2 through `accelerate launch` when DeepSpeed imports), evaluates the Stage II model
with the transformers backend (and vLLM when it imports), and writes a report to
`docs/gpu-smoke.md`: versions, device, step times, tokens/s, peak memory, rewards, what was skipped
and why.

Without CUDA it says so in one line and exits 0 without writing anything (the committed report,
a tracked file, stays as it is): nothing is pretended. `--cpu-check` runs the same steps on a CPU
to test this command; its report says it is not a GPU run.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import logging
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from mrtasks.logs import run_command
from mrtasks.tasks import MASKED_THEN_FILL

logger = logging.getLogger("training.gpu_smoke")

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_REPORT = REPO_ROOT / "docs" / "gpu-smoke.md"
BENCHMARKS = Path("..") / "shared" / "data" / "benchmarks"
# recipe family -> tiny-model family (its chat template and special tokens)
RECIPES = {"qwen2.5-3b": "qwen2.5", "r1-distill-1.5b": "r1-distill-qwen"}
TASK = MASKED_THEN_FILL
PACKAGES = ("torch", "transformers", "trl", "accelerate", "datasets", "tokenizers", "vllm", "deepspeed")
# Tiny but real: 2 rollouts of 2 prompts x 4 completions, 2 optimizer steps each, 64 new tokens.
SMOKE_OVERRIDES = [
    "num_generations=4", "per_device_train_batch_size=4", "rollout_batch_prompts=2", "mini_batch_prompts=1",
    "max_completion_length=64", "max_steps=4", "save_steps=2", "logging_steps=1", "learning_rate=1e-5",
    "max_train_samples=16", "max_prompt_length=4096", "vllm_max_model_length=4096", "seed=0",
]


def versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def device_info() -> dict[str, Any]:
    import torch

    info: dict[str, Any] = {"cuda_available": torch.cuda.is_available(), "torch_cuda": torch.version.cuda}
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        info |= {"name": props.name, "memory_gib": round(props.total_memory / 2**30, 1),
                 "count": torch.cuda.device_count(), "bf16": torch.cuda.is_bf16_supported()}
    return info


def importable(module: str) -> tuple[bool, str]:
    """Whether `module` imports here, and why not (first line of the error)."""
    if importlib.util.find_spec(module) is None:
        return False, "not installed"
    proc = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=600)
    if proc.returncode:
        lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
        return False, f"import fails: {lines[-1] if lines else 'unknown error'}"
    return True, ""


def planned_commands(work: str = "WORK") -> list[str]:
    """What the smoke run executes (also what the no-CUDA report lists)."""
    cmds = [f"python -m mrtasks.build --out {work}/tasks"]
    for recipe, family in RECIPES.items():
        cmds.append(f"training.tiny_model.build_tiny_model({work}/{family}, family={family!r})  # real template + tokens")
        cmds.append(
            f"python -m training.run --recipe {recipe} --stage all --task {TASK} --dataset {work}/tasks "
            f"--output-dir {work}/{recipe} model_name_or_path={work}/{family} generation=vllm|transformers "
            + " ".join(SMOKE_OVERRIDES)
        )
        cmds.append(
            f"accelerate launch --config_file training/accelerate/zero2.yaml --num_processes 1 -m training.run "
            f"--recipe {recipe} --stage 1 ... then --stage 2 ...  # when deepspeed imports"
        )
        cmds.append(
            f"python -m eval.run --model {work}/{recipe}/stage2_{TASK} --backend transformers "
            f"--benchmark-dir {BENCHMARKS} --benchmarks aime24 --max-problems 2 --n 4 --k 1 4 --max-new-tokens 64 "
            f"(and --backend vllm when vLLM imports)"
        )
    return cmds


def run_logged(cmd: list[str], log: Path, env: dict[str, str] | None = None, timeout: int = 3600) -> tuple[int, float]:
    """Run `cmd` with output to `log`; return (exit code, seconds)."""
    start = time.monotonic()
    with log.open("w") as f:
        try:
            code = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=REPO_ROOT, env=env, timeout=timeout)
        except subprocess.TimeoutExpired:
            code = 124
    return code, time.monotonic() - start


def tail(path: Path, lines: int = 8) -> str:
    text = path.read_text(errors="replace").splitlines() if path.is_file() else []
    return "\n".join(text[-lines:])


def stage_stats(stage_dir: Path) -> dict[str, Any]:
    """Step time, tokens/s, peak memory and rewards of one finished stage."""
    summary = json.loads((stage_dir / "training_summary.json").read_text())
    logs = [json.loads(line) for line in (stage_dir / "reward_log.jsonl").read_text().splitlines()]
    steps = max(summary["global_step"], 1)
    tokens = max((r.get("num_tokens", 0) for r in logs), default=0)
    rewards: dict[str, list[float]] = {}
    for r in logs:
        for key, value in r.items():
            if key.startswith("rewards/") and key.endswith("/mean"):
                rewards.setdefault(key.split("/")[1], []).append(value)
    return {
        "global_step": summary["global_step"],
        "step_time_s": round(summary["train_runtime_s"] / steps, 2),
        "tokens_per_s": round(tokens / summary["train_runtime_s"], 1) if summary["train_runtime_s"] else None,
        "peak_memory_gib": summary.get("cuda_peak_memory_gib"),
        "generation": "vllm" if summary["use_vllm"] else "transformers",
        "rewards": {name: round(sum(v) / len(v), 4) for name, v in rewards.items()},
        "think_prefilled": summary["semantics"]["think_prefilled"],
        "stop_token_ids": summary["semantics"]["stop_token_ids"],
    }


def smoke(work: Path, cpu: bool = False) -> dict[str, Any]:
    """The GPU smoke run; returns everything the report shows. `cpu=True` runs the same steps on the
    CPU (fp32, transformers generation, no DeepSpeed): a check of this command, not of a GPU."""
    from datasets import load_dataset

    sys.path.insert(0, str(REPO_ROOT))
    from training.tiny_model import build_tiny_model

    result: dict[str, Any] = {"runs": [], "evals": [], "skipped": [], "failed": []}
    vllm_ok, vllm_why = (False, "CPU check") if cpu else importable("vllm")
    ds_ok, ds_why = (False, "CPU check") if cpu else importable("deepspeed")
    if not vllm_ok:
        result["skipped"].append(f"vLLM colocate generation and the vLLM eval backend: vllm {vllm_why}")
    if not ds_ok:
        result["skipped"].append(f"DeepSpeed ZeRO-2 runs: deepspeed {ds_why}")

    data = work / "tasks"
    code, _ = run_logged([sys.executable, "-m", "mrtasks.build", "--out", str(data)], work / "build.log")
    if code:
        result["failed"].append(f"dataset build exited {code}:\n{tail(work / 'build.log')}")
        return result
    texts = [m["content"] for r in load_dataset(str(data), TASK, split="train") for m in r["prompt"]]
    texts += ["\\boxed{1}", "</think> \\boxed{2}"]
    generation = "vllm" if vllm_ok else "transformers"
    for recipe, family in RECIPES.items():
        model = build_tiny_model(work / family, texts, vocab_size=1024, hidden_size=256, family=family)
        variants = [("plain", None)] + ([("zero2", "training/accelerate/zero2.yaml")] if ds_ok else [])
        for variant, accel in variants:
            out = work / f"{recipe}-{variant}"
            overrides = [f"model_name_or_path={model}", f"generation={generation}", *SMOKE_OVERRIDES]
            if cpu:
                overrides.append("bf16=false")
            if generation == "vllm":
                overrides.append("vllm_gpu_memory_utilization=0.3")
            base = ["--recipe", recipe, "--task", TASK, "--dataset", str(data), "--output-dir", str(out)]
            if accel is None:
                cmds = [[sys.executable, "-m", "training.run", *base, "--stage", "all", *overrides]]
            else:  # under a launcher, one launch per stage
                launch = [sys.executable, "-m", "accelerate.commands.launch", "--config_file", accel,
                          "--num_processes", "1", "-m", "training.run", *base]
                stage2 = [o for o in overrides if not o.startswith("model_name_or_path=")]
                cmds = [[*launch, "--stage", "1", *overrides], [*launch, "--stage", "2", *stage2]]
            log = work / f"{recipe}-{variant}.log"
            code, seconds = 0, 0.0
            for i, cmd in enumerate(cmds):
                code, s = run_logged(cmd, log.with_suffix(f".{i}.log"))
                seconds += s
                if code:
                    break
            if code:
                result["failed"].append(f"{recipe} ({variant}) exited {code}:\n{tail(log.with_suffix(f'.{i}.log'))}")
                continue
            stages = {name: stage_stats(out / name) for name in (f"stage1_{TASK}", f"stage2_{TASK}")}
            result["runs"].append({"recipe": recipe, "variant": variant, "wall_s": round(seconds, 1), "stages": stages})
            if variant != "plain":
                continue
            backends = ["transformers"] + (["vllm"] if vllm_ok else [])
            for backend in backends:
                eval_out = work / f"eval-{recipe}-{backend}"
                cmd = [sys.executable, "-m", "eval.run", "--model", str(out / f"stage2_{TASK}"), "--backend", backend,
                       "--benchmark-dir", str(BENCHMARKS), "--benchmarks", "aime24", "--max-problems", "2",
                       "--n", "4", "--k", "1", "4", "--max-new-tokens", "64", "--output-dir", str(eval_out)]
                if cpu:
                    cmd += ["--device", "cpu"]
                if backend == "vllm":
                    cmd += ["--gpu-memory-utilization", "0.3", "--max-model-len", "4096"]
                code, seconds = run_logged(cmd, work / f"eval-{recipe}-{backend}.log")
                if code:
                    result["failed"].append(f"eval {recipe} ({backend}) exited {code}:\n"
                                            f"{tail(work / f'eval-{recipe}-{backend}.log')}")
                    continue
                summary = json.loads((eval_out / "summary.json").read_text())
                result["evals"].append({
                    "recipe": recipe, "backend": backend, "wall_s": round(seconds, 1),
                    "pass@1": summary["benchmarks"]["aime24"]["pass@k"]["1"],
                    "mean_new_tokens": summary["benchmarks"]["aime24"]["mean_new_tokens"],
                    "think_prefilled": summary["prompt"]["think_prefilled"],
                    "stop_token_ids": summary["generation"]["stop_token_ids"],
                })
    return result


def render(report: dict[str, Any]) -> str:
    v, d = report["versions"], report["device"]
    lines = [
        "# GPU smoke run (`make gpu-smoke`)",
        "",
        f"Generated by `python -m training.gpu_smoke` on {report['created']} (UTC).",
        "",
    ]
    if report.get("cpu_check"):
        status = "passed" if not report["result"]["failed"] else "FAILED"
        lines += [f"**Status: CPU check {status}** (`--cpu-check`: the GPU steps run on the CPU in fp32 with "
                  "transformers generation, to test this command; this is not a GPU run).", ""]
    elif not d["cuda_available"]:
        lines += [
            "**Status: not run on a GPU yet.** This machine has no CUDA device "
            f"(torch {v['torch']}, CUDA runtime {d['torch_cuda']}), so nothing was trained or evaluated here; "
            "the command exited 0 without pretending. Run `make gpu-smoke` on a CUDA machine with the GPU set "
            "installed (`pip install -c constraints/gpu.txt -e '.[train,eval,vllm]' deepspeed`) to replace "
            "this file with a real report.",
            "",
        ]
    else:
        status = "passed" if not report["result"]["failed"] else "FAILED"
        lines += [f"**Status: {status}** on {d['name']} ({d['memory_gib']} GiB, {d['count']} device(s), "
                  f"bf16 {'yes' if d['bf16'] else 'no'}).", ""]
    lines += ["## Versions", "", "| package | version |", "|---|---|"]
    lines += [f"| {name} | {ver or 'not installed'} |" for name, ver in v.items()]
    lines += ["", "## What runs", ""]
    lines += ["```"] + planned_commands() + ["```", ""]
    result = report.get("result")
    if result:
        lines += ["## Training (Stage I then Stage II, separate processes)", "",
                  "| recipe | variant | stage | generation | steps | s/step | tokens/s (prompt + completion) | peak GiB | rewards (mean) "
                  "| think prefilled | stop ids |",
                  "|---|---|---|---|---:|---:|---:|---:|---|---|---|"]
        for run in result["runs"]:
            for stage, s in run["stages"].items():
                rewards = ", ".join(f"{k} {val}" for k, val in s["rewards"].items())
                lines.append(f"| {run['recipe']} | {run['variant']} | {stage} | {s['generation']} | {s['global_step']} "
                             f"| {s['step_time_s']} | {s['tokens_per_s']} | {s['peak_memory_gib']} | {rewards} "
                             f"| {s['think_prefilled']} | {s['stop_token_ids']} |")
        lines += ["", "## Evaluation (AIME24, 2 problems, n = 4, 64 new tokens)", "",
                  "| recipe | backend | wall s | Pass@1 | mean new tokens | think prefilled | stop ids |",
                  "|---|---|---:|---:|---:|---|---|"]
        for e in result["evals"]:
            lines.append(f"| {e['recipe']} | {e['backend']} | {e['wall_s']} | {e['pass@1']:.3f} "
                         f"| {e['mean_new_tokens']} | {e['think_prefilled']} | {e['stop_token_ids']} |")
        lines += ["", "## Skipped", ""] + [f"- {s}" for s in result["skipped"] or ["nothing"]]
        if result["failed"]:
            lines += ["", "## Failed", ""]
            for f in result["failed"]:
                lines += ["```", f, "```"]
    else:
        lines += ["## Skipped", "", "- everything above: no CUDA device"]
    return "\n".join(lines) + "\n"


def _path_problem(option: str, path: Path, folder: bool) -> str | None:
    """Why `path` cannot be written (a report file, or a work folder), or None."""
    if folder and path.exists() and not path.is_dir():
        return f"{option} {path} exists and is not a folder"
    if not folder and path.is_dir():
        return f"{option} {path} is a folder; name a file"
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"{option} {path}: {ancestor} is not a folder"
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return f"{option} {path} is not writable"
    return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m training.gpu_smoke",
        description="GPU smoke run of training (Stage I then Stage II) and evaluation on tiny models with the real "
        "chat templates; writes a Markdown report. Without CUDA: says so and exits 0, writing nothing.",
        epilog="exit codes: 0 passed, or no CUDA here (nothing written); 1 a run failed (the report lists it); "
               "2 bad arguments; 4 --report or --work-dir cannot be written; 130 interrupted",
    )
    p.add_argument("--report", default=str(DEFAULT_REPORT), help="where to write the Markdown report")
    p.add_argument("--work-dir", help="keep the models, data and logs here (default: a temporary folder)")
    p.add_argument("--cpu-check", action="store_true",
                   help="run the same steps on the CPU (fp32, transformers generation) to test this command; "
                        "the report says it is not a GPU run")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logger.setLevel(logging.INFO)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    return run_command(lambda: _main(args), {})


def _main(args: argparse.Namespace) -> int:
    report_path = Path(args.report)
    device = device_info()
    if not device["cuda_available"] and not args.cpu_check:
        print(f"No CUDA device here (torch {versions()['torch']}): the GPU smoke run did not run and {report_path} "
              "was left as it is; run `make gpu-smoke` on a CUDA machine (or add --cpu-check to test this command "
              "on the CPU).")
        return 0
    problems = [_path_problem("--report", report_path, folder=False)]
    if args.work_dir:
        problems.append(_path_problem("--work-dir", Path(args.work_dir), folder=True))
    problem = next((x for x in problems if x), None)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 4
    report: dict[str, Any] = {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "versions": versions(),
        "device": device,
    }
    cpu = not device["cuda_available"]
    report["cpu_check"] = cpu
    if args.work_dir:
        work = Path(args.work_dir)
        work.mkdir(parents=True, exist_ok=True)
        report["result"] = smoke(work.resolve(), cpu=cpu)
    else:
        with tempfile.TemporaryDirectory(prefix="gpu-smoke-") as tmp:
            report["result"] = smoke(Path(tmp), cpu=cpu)
    report_path.parent.mkdir(parents=True, exist_ok=True)
    report_path.write_text(render(report))
    failed = bool(report.get("result", {}).get("failed"))
    print(f"report: {report_path}" + (" (FAILED runs listed)" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
