"""`mrtasks` (and the builder) work without torch, trl, transformers or vllm installed."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO_ROOT

BLOCK_HEAVY = """
import importlib.abc, sys

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"torch", "trl", "transformers", "vllm", "training", "eval"}:
            raise ModuleNotFoundError(f"{name} is blocked in this test", name=name)

sys.meta_path.insert(0, Block())
"""

USE_MRTASKS = """
import mrtasks.build, mrtasks.demo, mrtasks.curate.llm, mrtasks.rewards.bench, builders.mr_rlvr_tasks
from mrtasks.rewards import get_reward
print(get_reward("outcome")(["so \\\\boxed{\\\\frac{1}{2}}"], answer=["0.5"]))
"""


def test_mrtasks_needs_no_training_stack():
    result = subprocess.run(
        [sys.executable, "-c", BLOCK_HEAVY + USE_MRTASKS],
        cwd=REPO_ROOT,
        env={**os.environ, "USE_TORCH": "0"},  # datasets' switch: do not probe for torch
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[1.0]"
