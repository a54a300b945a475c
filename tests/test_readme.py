"""The README runs as written: its offline CPU route and its Python example, on this machine, offline."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text()


def fenced(section: str, lang: str) -> str:
    """The first ```lang block after the heading `section`."""
    body = README.split(section, 1)[1]
    return body.split(f"```{lang}\n", 1)[1].split("```", 1)[0]


def test_every_module_the_readme_runs_exists():
    modules = set(re.findall(r"python -m (\w[\w.]*\w)", README))
    assert {"mrtasks.build", "training.run", "eval.run", "training.tiny_model", "mrtasks.rewards.audit"} <= modules
    missing = [m for m in sorted(modules) if importlib.util.find_spec(m) is None]
    assert not missing


@pytest.mark.slow
def test_the_offline_cpu_route_and_the_python_example_run_as_written(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    commands = []
    for line in fenced("## Try it offline on a CPU", "bash").replace("\\\n", " ").splitlines():
        line = line.split("  #", 1)[0].strip()
        if line.startswith("export "):
            env.update(dict(item.split("=", 1) for item in shlex.split(line)[1:]))
        elif line.startswith("python -m "):
            commands.append(line.replace("outputs/", f"{tmp_path}/outputs/"))
        else:
            assert line.startswith(("make setup", "source .venv")), line  # the setup this test's venv already has
    assert env["HF_HUB_OFFLINE"] == "1" and len(commands) == 4
    for command in commands:
        argv = [sys.executable, *shlex.split(command)[1:]]
        proc = subprocess.run(argv, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=1200)
        assert proc.returncode == 0, (command, proc.stderr[-3000:])
    assert (tmp_path / "outputs" / "eval" / "tiny" / "table.md").is_file()

    # The Python example, as written, then with the one-step additions the offline section names.
    example = fenced("## Use the dataset and the rewards", "python")
    example = example.replace('"outputs/', f'"{tmp_path}/outputs/').replace('"runs/', f'"{tmp_path}/runs/')
    step = example.replace("bf16=False)", "bf16=False, num_generations=4, per_device_train_batch_size=4, "
                                          "max_completion_length=32, max_steps=1)") + "\ntrainer.train()\n"
    for code in (example, step):
        proc = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                              timeout=1200)
        assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "runs" / "masked_then_fill" / "checkpoint-1").is_dir()
