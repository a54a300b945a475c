"""Build safety (issue 10): `mrtasks.build` never destroys what it did not write, never leaves a half
build, and ends every everyday failure with one line and a documented exit code.

Each case asserts the exit code, the message and the files left behind. Kills are real: a build
subprocess is SIGKILLed at a named point (`MRTASKS_BUILD_FAULT`, see `mrtasks.output`).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from datasets import load_dataset

from mrtasks.build import EXIT_CODES, main
from mrtasks.output import MARKER, OutputFolder, OutputLocked
from tests.conftest import REPO_ROOT

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    for k, v in OFFLINE.items():
        monkeypatch.setenv(k, v)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under folder, by relative path."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def differing(a: dict[str, bytes], b: dict[str, bytes]) -> list[str]:
    """File names present in only one snapshot or with different bytes (for assertion messages)."""
    return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))


def siblings(out: Path) -> list[str]:
    """Staging or swapped-out folders a build left beside out (the lock file is expected)."""
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.") and not p.name.endswith(".lock"))


def run_main(capsys, *args: str) -> tuple[int, str]:
    code = main([*args, "--no-progress"])
    return code, capsys.readouterr().err


def subprocess_build(out: Path, *args: str, fault: str | None = None) -> subprocess.Popen:
    env = {**os.environ, **OFFLINE}
    env.pop("MRTASKS_BUILD_FAULT", None)
    if fault:
        env["MRTASKS_BUILD_FAULT"] = fault
    # A shell runs background jobs with SIGINT ignored and children inherit that, so Python would not
    # turn SIGINT into KeyboardInterrupt: the build starts with the default disposition, as from a terminal.
    return subprocess.Popen(
        [sys.executable, "-m", "mrtasks.build", "--out", str(out), "--no-progress", *args],
        cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


@pytest.fixture(scope="module")
def references(tmp_path_factory):
    """Finished builds of the bundled sample with seed 0 and seed 1 (what a folder may ever hold)."""
    root = tmp_path_factory.mktemp("refs")
    with pytest.MonkeyPatch.context() as mp:
        for k, v in OFFLINE.items():
            mp.setenv(k, v)
        for seed in (0, 1):
            assert main(["--out", str(root / f"seed{seed}"), "--seed", str(seed), "--no-progress"]) == 0
    return {seed: snapshot(root / f"seed{seed}") for seed in (0, 1)}


# --- 1. guarded output -------------------------------------------------------------------------


def test_a_folder_that_is_not_a_build_is_refused_before_any_work(tmp_path, capsys):
    mine = tmp_path / "project"
    (mine / "data").mkdir(parents=True)
    (mine / "README.md").write_text("my notes")
    (mine / "data" / "results.csv").write_text("1,2,3")
    before = snapshot(mine)

    # the source does not exist: exit 4 (not 2) shows --out is checked before any source is read
    code, err = run_main(capsys, "--out", str(mine), "--source", str(tmp_path / "absent.jsonl"))

    assert code == 4
    assert err.count("\n") == 1 and "not empty and holds no previous build" in err and "refusing" in err
    assert snapshot(mine) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project"], "not even a lock file is created"


def test_out_that_is_a_file_or_under_a_file_is_refused(tmp_path, capsys):
    f = tmp_path / "file.txt"
    f.write_text("keep me")
    code, err = run_main(capsys, "--out", str(f))
    assert code == 4 and "is not a folder" in err and err.count("\n") == 1
    code, err = run_main(capsys, "--out", str(f / "sub"))
    assert code == 4 and "not a folder" in err
    assert f.read_text() == "keep me"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_parent_is_refused_before_any_work(tmp_path, capsys):
    parent = tmp_path / "ro"
    parent.mkdir()
    parent.chmod(0o555)
    try:
        code, err = run_main(capsys, "--out", str(parent / "out"), "--source", str(tmp_path / "absent.jsonl"))
    finally:
        parent.chmod(0o755)
    assert code == 4 and "cannot write" in err and err.count("\n") == 1


def test_a_previous_build_is_replaced_whole_and_marked(tmp_path, capsys, references):
    out = tmp_path / "tasks"
    assert run_main(capsys, "--out", str(out), "--seed", "1")[0] == 0
    assert run_main(capsys, "--out", str(out), "--seed", "0")[0] == 0
    assert snapshot(out) == references[0], differing(snapshot(out), references[0])
    assert siblings(out) == []
    marker = json.loads((out / "build_stats.json").read_text())[MARKER]
    assert marker["files"] == sorted(snapshot(out))


def test_a_build_folder_with_foreign_files_is_refused(tmp_path, capsys):
    out = tmp_path / "tasks"
    assert run_main(capsys, "--out", str(out))[0] == 0
    (out / "data" / "notes.txt").write_text("mine")
    before = snapshot(out)
    code, err = run_main(capsys, "--out", str(out), "--seed", "3")
    assert code == 4 and "did not write (data/notes.txt)" in err
    assert snapshot(out) == before


def test_an_empty_existing_folder_is_used(tmp_path, capsys, references):
    out = tmp_path / "empty"
    out.mkdir()
    assert run_main(capsys, "--out", str(out), "--seed", "0")[0] == 0
    assert snapshot(out) == references[0], differing(snapshot(out), references[0])


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o755), (0o077, 0o700)])
def test_a_build_keeps_the_umask_and_leaves_no_lock_file(tmp_path, capsys, umask, mode):
    old = os.umask(umask)
    try:
        code, _ = run_main(capsys, "--out", str(tmp_path / "tasks"), "--limit", "12", "--allow-empty")
    finally:
        os.umask(old)
    assert code == 0
    assert (tmp_path / "tasks").stat().st_mode & 0o777 == mode  # not mkdtemp's 0700 whatever the umask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tasks"], "the lock file goes with the run"


# --- lock ----------------------------------------------------------------------------------------


def test_a_build_into_a_locked_folder_is_refused_and_changes_nothing(tmp_path, capsys):
    out = tmp_path / "tasks"
    assert run_main(capsys, "--out", str(out), "--seed", "0")[0] == 0
    before = snapshot(out)
    with OutputFolder(out):  # another build holds the folder
        code, err = run_main(capsys, "--out", str(out), "--seed", "1")
        assert code == 4 and f"another build (pid {os.getpid()}) is writing into {out}" in err
        with pytest.raises(OutputLocked):
            OutputFolder(out).__enter__()
    assert snapshot(out) == before
    assert run_main(capsys, "--out", str(out), "--seed", "1")[0] == 0  # the lock is released


def test_two_concurrent_builds_into_one_folder(tmp_path, references):
    out = tmp_path / "tasks"
    go = tmp_path / "go"
    first = subprocess_build(out, "--seed", "0", fault=f"pipeline_done:wait={go}")  # holds the lock until `go`
    deadline = time.monotonic() + 60
    lock = tmp_path / ".tasks.lock"
    while not (lock.exists() and lock.read_text().strip() == str(first.pid)):
        assert first.poll() is None and time.monotonic() < deadline, first.stderr.read() if first.poll() else "no lock"
        time.sleep(0.05)
    second = subprocess_build(out, "--seed", "1")
    _, err2 = second.communicate(timeout=120)
    go.touch()
    _, err1 = first.communicate(timeout=120)
    assert second.returncode == 4, err2
    assert err2.strip().splitlines() == [f"error: another build (pid {first.pid}) is writing into {out}; "
                                         "wait for it to finish or choose another --out"]
    assert first.returncode == 0, err1
    assert snapshot(out) == references[0], differing(snapshot(out), references[0])
    assert siblings(out) == []


# --- kills at several points of a rebuild -------------------------------------------------------

SLOW = pytest.mark.slow
KILL_POINTS = [  # (fault, which build the folder holds right after the kill); three run by default
    pytest.param("staged", 0, marks=SLOW, id="staged"),
    pytest.param("pipeline_done", 0, marks=SLOW, id="pipeline_done"),
    pytest.param("config_written", 0, id="config_written"),
    pytest.param("staged_complete", 0, marks=SLOW, id="staged_complete"),
    pytest.param("swapped", 1, id="swapped"),
    pytest.param("no_exchange,moved_aside", 0, id="fallback_moved_aside"),
    pytest.param("no_exchange,swapped", 1, marks=SLOW, id="fallback_swapped"),
]


@pytest.mark.parametrize(("fault", "holds"), KILL_POINTS)
def test_a_killed_rebuild_leaves_the_old_or_the_new_build_never_a_mix(tmp_path, capsys, references, fault, holds):
    out = tmp_path / "tasks"
    assert run_main(capsys, "--out", str(out), "--seed", "0")[0] == 0

    proc = subprocess_build(out, "--seed", "1", fault=fault)
    proc.communicate(timeout=120)

    assert proc.returncode == -9, "the build was killed"
    if fault == "no_exchange,moved_aside":
        assert not out.exists() and len(siblings(out)) == 2  # between the fallback's two renames
    else:
        assert snapshot(out) == references[holds], differing(snapshot(out), references[holds])
        assert load_dataset(str(out), "outcome", split="train").num_rows > 0
    # the next build cleans up (and restores the previous build first where needed), then runs
    assert run_main(capsys, "--out", str(out), "--seed", "1")[0] == 0
    assert snapshot(out) == references[1], differing(snapshot(out), references[1])
    assert siblings(out) == []


# --- 2. failures are visible ----------------------------------------------------------------------


def test_every_row_dropped_exits_3_and_keeps_the_previous_build(tmp_path, capsys):
    out = tmp_path / "tasks"
    assert run_main(capsys, "--out", str(out))[0] == 0
    before = snapshot(out)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"problem": "p"}\n{broken\n{"question": 1}\n{"problem": "q"}\n')

    code, err = run_main(capsys, "--out", str(out), "--source", f"{bad}:kind=proof")

    assert code == 3
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: empty build: every source row was dropped (4 read); top drop reasons: ")
    assert "source/missing_field: 3" in last and "source/bad_json: 1" in last and "left untouched" in last
    assert snapshot(out) == before
    assert siblings(out) == []


def test_every_task_config_ending_empty_exits_3_unless_allowed(tmp_path, capsys):
    src = tmp_path / "one.jsonl"
    src.write_text(json.dumps({"problem": "Show $1<2$.", "solution": "We have $2-1=1$.\n\nSo $1<2$."}) + "\n")
    out = tmp_path / "tasks"

    code, err = run_main(capsys, "--out", str(out), "--source", f"{src}:kind=proof")
    assert code == 3
    [line] = err.strip().splitlines()
    assert line.startswith("error: empty build: every task config (masked_then_fill, step_reordering, ")
    assert "ended with no rows" in line and "masked_then_fill/too_few_formulas: 1" in line
    assert not out.exists() and siblings(out) == []

    code, _ = run_main(capsys, "--out", str(out), "--source", f"{src}:kind=proof", "--allow-empty")
    assert code == 0
    assert json.loads((out / "build_stats.json").read_text())["counts"]["trajectories"]["train"] + \
        json.loads((out / "build_stats.json").read_text())["counts"]["trajectories"]["validation"] == 1


PROOFS = [
    {"problem": f"Show that $n^2 + {k}n$ is even for every integer $n$.",
     "solution": f"Let $n$ be an integer. Then $n^2 + {k}n = n(n + {k})$. If $n$ is even, the product is even. "
                 f"If $n$ is odd, then $n + {k}$ is odd too, so we argue once more. Hence $n(n + {k})$ is even in every case."}
    for k in (1, 3, 5, 7, 9, 11)
]


def test_a_proof_only_corpus_builds_and_reports_its_empty_outcome_config(tmp_path, capsys):
    src = tmp_path / "proofs.jsonl"
    src.write_text("".join(json.dumps(p) + "\n" for p in PROOFS))
    out = tmp_path / "tasks"

    code = main(["--out", str(out), "--source", f"{src}:kind=proof", "--no-dedup", "--no-progress"])
    printed = capsys.readouterr().out

    assert code == 0
    stats = json.loads((out / "build_stats.json").read_text())
    assert sum(stats["counts"]["step_reordering"].values()) > 0 and sum(stats["counts"]["outcome"].values()) == 0
    why = stats["empty_configs"]["outcome"]
    assert why.startswith("no row has a final answer (every trajectory is a proof)") and "outcome/not_computation: 6" in why
    assert f"outcome: no rows: {why}" in printed
    card = (out / "README.md").read_text()
    assert "This corpus cannot feed every config" in card and f"- `outcome`: {why}" in card
    assert "config_name: outcome" not in card  # no files, so no config entry the Hub would fail to load


def test_exit_codes_are_documented_in_help():
    text = subprocess.run([sys.executable, "-m", "mrtasks.build", "--help"], capture_output=True, text=True,
                          check=True, cwd=REPO_ROOT).stdout
    assert "exit codes:" in text
    for code in EXIT_CODES:
        assert f"\n  {code:<4}" in text
    for flag in ("--allow-empty", "--timeout", "--max-retries", "--max-tokens", "--no-cache"):
        assert flag in text


# --- 5. -v raises only this project's loggers -------------------------------------------------------


def test_verbose_raises_only_project_loggers(tmp_path, capsys):
    assert run_main(capsys, "--out", str(tmp_path / "v"), "-v")[0] == 0
    assert logging.getLogger("mrtasks").getEffectiveLevel() == logging.DEBUG
    assert logging.getLogger("builders").getEffectiveLevel() == logging.DEBUG
    for lib in ("httpx", "httpx2", "urllib3", "openai", "huggingface_hub", "datasets", "filelock"):
        assert logging.getLogger(lib).getEffectiveLevel() >= logging.WARNING, lib
    assert run_main(capsys, "--out", str(tmp_path / "q"))[0] == 0
    assert logging.getLogger("mrtasks").getEffectiveLevel() == logging.INFO


# --- 4/5. the llm path against a local OpenAI-compatible server ------------------------------------

openai = pytest.importorskip("openai")
from mrtasks.curate.testing import FakeOpenAIServer, Reply  # noqa: E402

KEY_CANARY = "sk-canary-3f9a1c7e5b2d4068"
TOKEN_CANARY = "hf_canaryTOKENx7Q2mZ9wL4vB8nR1"


def llm_args(server: FakeOpenAIServer, *extra: str) -> list[str]:
    return ["--annotator", "llm", "--base-url", server.base_url, "--model", "fake-r1", *extra]


@pytest.fixture
def server():
    with FakeOpenAIServer() as s:
        yield s


def test_rejected_api_key_is_one_line_exit_5_and_keeps_the_previous_build(tmp_path, capsys, server, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    out = tmp_path / "tasks"
    assert run_main(capsys, "--out", str(out))[0] == 0
    before = snapshot(out)
    server.responder = lambda body: Reply(status=401)

    code, err = run_main(capsys, "--out", str(out), *llm_args(server))

    assert code == 5
    assert err.strip().splitlines()[-1] == (
        f"error: the endpoint refused the API key (HTTP 401); set $OPENAI_API_KEY; {out} left untouched")
    assert "Traceback" not in err
    assert snapshot(out) == before and siblings(out) == []


def test_a_cache_file_that_is_not_sqlite_fails_before_any_call(tmp_path, capsys, server):
    bad = tmp_path / "cache.sqlite"
    bad.write_text("not a database " * 100)
    code, err = run_main(capsys, "--out", str(tmp_path / "tasks"), *llm_args(server, "--cache", str(bad)))
    assert code == 5 and "is not a usable sqlite database" in err and err.count("\n") == 1
    assert server.log == [] and not (tmp_path / "tasks").exists()
    assert bad.read_text() == "not a database " * 100


def test_an_endpoint_that_is_down_is_an_empty_build_exit_3(tmp_path, capsys):
    with FakeOpenAIServer() as s:
        url = s.base_url  # nobody listens there once it stops
    code, err = run_main(capsys, "--out", str(tmp_path / "tasks"), "--annotator", "llm", "--base-url", url,
                         "--model", "m", "--max-retries", "0", "--no-cache")
    assert code == 3
    line = err.strip().splitlines()[-1]
    assert "every source row was dropped" not in line and "ended with no rows" in line
    assert "annotate/llm_api_error: " in line and not (tmp_path / "tasks").exists()


def test_the_default_cache_is_persistent_and_a_rerun_pays_nothing(tmp_path, capsys, server, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert run_main(capsys, "--out", str(tmp_path / "a"), *llm_args(server))[0] == 0
    calls = len(server.log)
    assert (tmp_path / "xdg" / "mrtasks" / "llm-cache.sqlite").is_file()
    assert main(["--out", str(tmp_path / "b"), "--no-progress", *llm_args(server)]) == 0
    printed = capsys.readouterr().out
    assert calls > 0 and len(server.log) == calls
    a, b = (json.loads((tmp_path / d / "build_stats.json").read_text()) for d in "ab")
    assert a["fingerprint"] == b["fingerprint"]
    assert a["annotator_stats"]["requests"] == calls and a["annotator_stats"].get("transport_retries", 0) == 0
    assert b["annotator_stats"]["cache_hits"] >= calls and "requests" not in b["annotator_stats"]
    assert f"llm calls: requests 0, cache hits {b['annotator_stats']['cache_hits']}, transport retries 0" in printed


def test_secrets_never_reach_output_logs_or_files_and_v_stays_quiet(tmp_path, server):
    """Canary: the API key and HF_TOKEN appear nowhere but the Authorization header, even with -v."""
    out, xdg = tmp_path / "tasks", tmp_path / "xdg"
    env = {**os.environ, **OFFLINE, "OPENAI_API_KEY": KEY_CANARY, "HF_TOKEN": TOKEN_CANARY, "XDG_CACHE_HOME": str(xdg)}
    proc = subprocess.run(
        [sys.executable, "-m", "mrtasks.build", "--out", str(out), "-v", "--no-progress", *llm_args(server)],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    for text in (proc.stdout, proc.stderr):
        assert KEY_CANARY not in text and TOKEN_CANARY not in text
    assert "INFO mrtasks.curate.llm: llm annotate: 36 trajectories, 72 requests" in proc.stderr
    assert not [line for line in proc.stderr.splitlines() if not line.startswith(("DEBUG mrtasks", "INFO mrtasks",
                "DEBUG builders", "INFO builders", "WARNING", "ERROR"))], "no library logs (httpx, openai, datasets)"
    for f in [*out.rglob("*"), *xdg.rglob("*"), *tmp_path.glob(".tasks*")]:
        if f.is_file():
            data = f.read_bytes()
            assert KEY_CANARY.encode() not in data and TOKEN_CANARY.encode() not in data, f
    assert server.log and all({k.lower(): v for k, v in r.headers.items()}["authorization"] == f"Bearer {KEY_CANARY}"
                              for r in server.log)
    for r in server.log:
        others = {k: v for k, v in r.headers.items() if k.lower() != "authorization"}
        assert KEY_CANARY not in json.dumps([r.body, others])


def test_out_dot_in_a_project_folder_is_refused(tmp_path, capsys, monkeypatch):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("print('mine')")
    monkeypatch.chdir(tmp_path)
    code, err = run_main(capsys, "--out", ".")
    assert code == 4 and "is the current folder" in err
    code, err = run_main(capsys, "--out", "src")
    assert code == 4 and "holds no previous build" in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["main.py", "src"]


def test_a_build_from_before_the_marker_is_recognised(tmp_path, capsys, references):
    out = tmp_path / "old"
    assert run_main(capsys, "--out", str(out), "--seed", "1")[0] == 0
    stats = json.loads((out / "build_stats.json").read_text())
    del stats[MARKER]
    (out / "build_stats.json").write_text(json.dumps(stats))
    assert run_main(capsys, "--out", str(out), "--seed", "0")[0] == 0
    assert snapshot(out) == references[0], differing(snapshot(out), references[0])
    (out / "notes.txt").write_text("x")  # not a build any more: refused
    stats = json.loads((out / "build_stats.json").read_text())
    del stats[MARKER]
    (out / "build_stats.json").write_text(json.dumps(stats))
    assert run_main(capsys, "--out", str(out), "--seed", "1")[0] == 4


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_an_interrupted_build_exits_130_and_leaves_the_previous_build(tmp_path, capsys, references, sig):
    import signal

    out = tmp_path / "tasks"
    assert run_main(capsys, "--out", str(out), "--seed", "0")[0] == 0
    proc = subprocess_build(out, "--seed", "1", fault="pipeline_done:sleep=30")
    deadline = time.monotonic() + 60
    while not siblings(out) or (tmp_path / ".tasks.lock").read_text().strip() != str(proc.pid):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(1.0)  # well into the pipeline (or its pause)
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.strip().splitlines()[-1] == "error: interrupted"
    assert snapshot(out) == references[0] and siblings(out) == []


def test_the_current_folder_is_never_replaced_even_when_empty(tmp_path, capsys, monkeypatch):
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    code, err = run_main(capsys, "--out", ".")
    assert code == 4 and "is the current folder" in err
    assert (tmp_path / "here").is_dir() and list((tmp_path / "here").iterdir()) == []


def _can_remount_read_only(tmp_path: Path) -> bool:
    probe = subprocess.run(["unshare", "-m", "sh", "-c", f"mount --bind {tmp_path} {tmp_path} && "
                            f"mount -o remount,bind,ro {tmp_path}"], capture_output=True)
    return probe.returncode == 0


def test_a_read_only_filesystem_is_refused_before_any_work(tmp_path, capsys):
    """A private mount namespace (root + unshare) makes the parent folder a read-only mount."""
    if os.geteuid() != 0 or not _can_remount_read_only(tmp_path):
        pytest.skip("needs root and unshare -m to make a read-only mount")
    parent = tmp_path / "ro"
    assert run_main(capsys, "--out", str(parent / "tasks"))[0] == 0
    before = snapshot(parent)
    absent = tmp_path / "absent.jsonl"  # an unread source: exit 4, not 2, shows --out was checked first
    results = {}
    for name in ("tasks", "new"):
        cmd = (f"mount --bind {parent} {parent} && mount -o remount,bind,ro {parent} && exec {sys.executable} "
               f"-m mrtasks.build --no-progress --out {parent / name} --source {absent}")
        results[name] = subprocess.run(["unshare", "-m", "sh", "-c", cmd], cwd=REPO_ROOT, capture_output=True,
                                       text=True, env={**os.environ, **OFFLINE}, timeout=120)
    assert results["tasks"].returncode == 4
    assert results["tasks"].stderr.strip().splitlines() == [f"error: --out {parent / 'tasks'} is not writable"]
    assert results["new"].returncode == 4
    assert results["new"].stderr.strip().splitlines()[-1].startswith(f"error: --out {parent / 'new'}: cannot write in")
    assert snapshot(parent) == before


def test_a_full_disk_is_one_line_and_keeps_the_previous_build(tmp_path):
    """A 200 KiB tmpfs in a private mount namespace: a small build fits, staging the default one beside it does not."""
    if os.geteuid() != 0 or not _can_remount_read_only(tmp_path):
        pytest.skip("needs root and unshare -m to mount a small tmpfs")
    disk = tmp_path / "disk"
    disk.mkdir()
    build = f"{sys.executable} -m mrtasks.build --no-progress --out {disk / 'tasks'}"
    cmd = (f"mount -t tmpfs -o size=200k tmpfs {disk} && cd {REPO_ROOT} && "
           f"{build} --source sample:limit=8 --allow-empty >/dev/null && cat {disk}/tasks/build_stats.json && echo && "
           f"{build} >/dev/null; echo rc=$?; cat {disk}/tasks/build_stats.json; echo; ls -a {disk}")
    proc = subprocess.run(["unshare", "-m", "sh", "-c", cmd], capture_output=True, text=True,
                          env={**os.environ, **OFFLINE}, timeout=300)
    before, rest = proc.stdout.split("\nrc=", 1)
    code, after_and_listing = rest.split("\n", 1)
    after, listing = after_and_listing.rsplit("}\n", 1)
    assert code == "4", proc.stderr
    assert json.loads(after + "}") == json.loads(before), "the previous build is untouched"
    assert sorted(listing.split()) == [".", "..", "tasks"], "nothing staged is left behind, not even the lock file"
    err = proc.stderr.strip().splitlines()[-1]
    assert err.startswith("error: I/O error: No space left on device") and err.endswith("left untouched")


@pytest.mark.slow  # the annotator-level twin runs by default (test_llm_annotator.py::test_killed_build_resumes...)
def test_a_killed_llm_build_costs_at_most_the_calls_in_flight(tmp_path, capsys, server, monkeypatch):
    """The README's statement, end to end: kill -9 a build mid-annotation, rerun the same command;
    no answered call is paid twice, and only the `--concurrency` calls in flight are sent again."""
    import threading

    from mrtasks.curate.testing import oracle_reply

    answered_before_kill, concurrency = 20, 4
    served, lock = [0], threading.Lock()

    def answer_then_hang(body):
        with lock:
            served[0] += 1
            stall = served[0] > answered_before_kill
        return Reply(hang=True) if stall else oracle_reply(body)

    server.responder = answer_then_hang
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    out = tmp_path / "tasks"
    args = llm_args(server, "--concurrency", str(concurrency))
    proc = subprocess.Popen([sys.executable, "-m", "mrtasks.build", "--out", str(out), "--no-progress", *args],
                            cwd=REPO_ROOT, env={**os.environ, **OFFLINE}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while len(server.log) < answered_before_kill + concurrency:  # every slot stuck on an unanswered call
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() else "slow"
            time.sleep(0.05)
        time.sleep(0.2)
    finally:
        proc.kill()
        proc.wait()
    first_run = list(server.log)
    assert len(first_run) == answered_before_kill + concurrency and len(server.completed()) == answered_before_kill
    assert not out.exists()

    server.responder = oracle_reply
    assert run_main(capsys, "--out", str(out), *args)[0] == 0

    answered = [r.key for r in server.completed()]
    assert len(answered) == len(set(answered)), "no answered call was paid for twice"
    in_flight = {r.key for r in first_run if not r.completed}
    resent = [r for r in server.log[len(first_run):] if r.key in in_flight]
    assert len(resent) == len(in_flight) == concurrency, "exactly the calls in flight at the kill were sent again"
    stats = json.loads((out / "build_stats.json").read_text())
    assert stats["annotator_stats"]["cache_hits"] >= answered_before_kill


def test_bad_thresholds_benchmarks_and_timeouts_are_one_line_before_any_work(tmp_path, capsys):
    (tmp_path / "trunc.jsonl").write_text('{"problem": "What is 1+1?"}\n{"problem": "What')
    (tmp_path / "nofield.jsonl").write_text('{"foo": "bar"}\n')
    (tmp_path / "empty.jsonl").write_text("")
    out = tmp_path / "out"
    for argv, words in ((["--dedup-threshold", "2"], "dedup_threshold must be in (0, 1]"),
                        (["--dedup-threshold", "nan"], "dedup_threshold must be in (0, 1]"),
                        (["--dedup-threshold", "0"], "--no-dedup"),
                        (["--decontam-threshold", "-1"], "decontam_threshold must be in (0, 1]"),
                        (["--benchmarks", str(tmp_path / "trunc.jsonl")], "trunc.jsonl:2"),
                        # a benchmark file that names no problem would decontaminate against nothing
                        (["--benchmarks", str(tmp_path / "nofield.jsonl")], "has no row with a problem text"),
                        (["--benchmarks", str(tmp_path / "empty.jsonl")], "has no row with a problem text"),
                        (["--annotator", "llm", "--model", "m", "--timeout", "nan"], "finite numbers of seconds"),
                        (["--annotator", "llm", "--model", "m", "--timeout", "inf"], "finite numbers of seconds")):
        code, err = run_main(capsys, "--out", str(out), *argv)
        assert code == 2 and words in err and err.count("\n") == 1, (argv, err)
        assert not out.exists(), argv
