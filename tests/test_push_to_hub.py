"""`--push-to-hub` against a local Hub endpoint (HF_ENDPOINT -> `FakeHubServer`), in a subprocess so
huggingface_hub reads HF_ENDPOINT, HF_TOKEN and HF_HUB_OFFLINE as a user's shell would set them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from datasets import load_dataset

from mrtasks.curate.testing import FakeHubServer
from tests.conftest import REPO_ROOT

TOKEN = "hf_canaryPUSHtoken7Q2mZ9wL4vB8nR1x"
REPO = "tester/mr-rlvr-tasks"


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def push(out: Path, hub: FakeHubServer | None, token: str = TOKEN, offline: bool = False, endpoint: str | None = None,
         xet: bool = True):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update({"HF_DATASETS_OFFLINE": "1", "HF_TOKEN": token, "HF_HUB_DISABLE_TELEMETRY": "1",
                "HF_HOME": str(out.parent / "hf_home")})
    if not xet:
        env["HF_HUB_DISABLE_XET"] = "1"  # huggingface_hub's single-commit path
    env["HF_ENDPOINT"] = endpoint or (hub.url if hub else "")
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "mrtasks.build", "--out", str(out), "--no-progress", "--push-to-hub", REPO],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300,
    )


@pytest.mark.parametrize("xet", [True, False], ids=["pipelined_upload", "single_commit"])
def test_push_uploads_exactly_the_built_folder_and_the_token_only_in_authorization(tmp_path, xet):
    out = tmp_path / "tasks"
    with FakeHubServer(TOKEN) as hub:
        proc = push(out, hub, xet=xet)
    assert proc.returncode == 0, proc.stderr
    assert f"pushed to {hub.url}/datasets/{REPO}/commit/" in proc.stdout
    assert hub.repos[REPO] == files_of(out), "the uploaded files are exactly the built folder"
    assert [r.status for r in hub.log if r.status >= 400 and r.status != 409] == [], [r.path for r in hub.log]
    for r in hub.log:
        headers = {k.lower(): v for k, v in r.headers.items()}
        assert headers.pop("authorization") == f"Bearer {TOKEN}"
        assert TOKEN not in json.dumps(headers) and TOKEN not in r.path and TOKEN.encode() not in r.body
    assert TOKEN not in proc.stdout + proc.stderr
    assert not any(TOKEN.encode() in data for data in files_of(tmp_path).values())


def test_a_bad_token_fails_before_any_work_with_one_line(tmp_path):
    out = tmp_path / "tasks"
    with FakeHubServer(TOKEN) as hub:
        proc = push(out, hub, token="hf_wrongTOKENwrongTOKENwrong12")
    assert proc.returncode == 6
    assert proc.stderr.strip().splitlines()[-1] == (
        f"error: --push-to-hub {REPO}: the Hub refused the token (HTTP 401); set HF_TOKEN or log in with "
        "`hf auth login`; nothing was built")
    assert "wrongTOKEN" not in proc.stderr + proc.stdout
    assert not out.exists() and [r.path for r in hub.log] == ["/api/whoami-v2"]


def test_offline_or_unreachable_hub_fails_before_any_work(tmp_path):
    proc = push(tmp_path / "a", None, offline=True, endpoint="http://127.0.0.1:9")
    assert proc.returncode == 6 and proc.stderr.strip().splitlines()[-1] == (
        f"error: --push-to-hub {REPO} needs the network, but HF_HUB_OFFLINE is set")
    with FakeHubServer(TOKEN) as hub:
        url = hub.url  # nobody listens there once it stops
    proc = push(tmp_path / "b", None, endpoint=url)
    assert proc.returncode == 6
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith(f"error: --push-to-hub {REPO}: cannot reach {url}") and line.endswith("nothing was built")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_failed_push_leaves_the_local_build_intact_with_one_line(tmp_path):
    out = tmp_path / "tasks"
    with FakeHubServer(TOKEN, fail_commit=403) as hub:
        proc = push(out, hub)
    assert proc.returncode == 6
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith(f"error: push to {REPO} failed: the Hub refused the token (HTTP 403)")
    assert line.endswith(f"the local build in {out} is complete")
    assert "Traceback" not in proc.stderr and hub.repos[REPO] == {}
    stats = json.loads((out / "build_stats.json").read_text())
    assert load_dataset(str(out), "outcome", split="train").num_rows == stats["counts"]["outcome"]["train"] > 0
