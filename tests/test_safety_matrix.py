"""Every command's bad-input matrix (`tests/safety_matrix.py`) under pytest, one test per case.

The quick subset runs by default (`make test`); every other case is marked slow (`make test-all`,
or `python -m tests.safety_matrix` for the whole table with counts).
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT
from tests.safety_matrix import CASES, QUICK, Fixtures, matrix_env, run_case

COMMANDS = ("mrtasks.build", "mrtasks.rewards.audit", "mrtasks.rewards.bench", "mrtasks.rewards.accuracy",
            "mrtasks.curate.annotator_bench", "mrtasks.curate.bench", "mrtasks.curate.llm_bench", "mrtasks.curate.batch",
            "training.run",
            "eval.run", "eval.compare", "mrtasks.demo", "training.gpu_smoke", "training.tiny_model")


@pytest.fixture(scope="session")
def matrix(tmp_path_factory):
    root = tmp_path_factory.mktemp("safety-matrix")
    (root / "fixtures").mkdir()
    (root / "cases").mkdir()
    env = matrix_env(root)
    return Fixtures(root / "fixtures", env), env, root / "cases"


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c.id, marks=() if c.id in QUICK else pytest.mark.slow) for c in CASES]
)
def test_case(case, matrix):
    fx, env, cases_root = matrix
    result = run_case(case, fx, env, cases_root)
    assert result.verdict == "good", f"{result.verdict}: exit {result.code}: {result.detail}"


def test_the_matrix_covers_every_command_and_the_quick_set_exists():
    assert {c.command for c in CASES} == set(COMMANDS)
    assert QUICK <= {c.id for c in CASES}
    assert len(CASES) >= 160 and len({c.id for c in CASES}) == len(CASES)
    interrupted = {c.command for c in CASES if c.interrupt is not None}
    assert {"eval.run", "training.run", "mrtasks.rewards.audit", "mrtasks.rewards.bench"} <= interrupted


def test_every_expected_exit_code_is_documented_in_help():
    """The codes the matrix expects are the ones each command's --help epilog lists."""
    for command in COMMANDS:
        text = subprocess.run([sys.executable, "-m", command, "--help"], cwd=REPO_ROOT, capture_output=True, text=True,
                              timeout=300).stdout
        text = " ".join(text.split())
        assert "exit codes" in text.lower(), command
        for code in sorted({c.code for c in CASES if c.command == command}):
            assert re.search(rf"(?<![\w.]){code}(?![\w.])", text.split("xit codes", 1)[1]), (command, code)
