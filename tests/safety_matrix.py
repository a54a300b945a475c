"""`python -m tests.safety_matrix`: every command's everyday mistakes and bad inputs, run for real.

Each case runs one command line of this project in a subprocess (offline, in its own folder) and
asserts what a careful user expects:

- the exit code is the one the command documents (its `--help` epilog and the README);
- a failure ends stderr with one line, `error: ...`, naming the problem (no traceback);
- the files the user had (the case folder, the shared fixtures: a tiny build, a tiny model, a
  finished eval and a finished training stage) are unchanged, byte for byte; a failed command
  leaves no new files behind either;
- where the command succeeds, its output is right (a `check` per case: no doubled samples, a
  warning that names the problem, ...).

Ctrl-C cases send SIGINT to the child's process group once it is working (a file or a line
appeared) and expect one line and exit 130.

Every case gets one verdict: `good`, `traceback`, `silent_wrong` (exit 0 where an error was due,
or a wrong result without a word), `lost_files` (a file the user had changed or went away) or
`other` (another exit code, a message that does not name the problem, files left behind by a
failure, a hang).

    python -m tests.safety_matrix                 # every case (about 10 minutes on 2 busy cores)
    python -m tests.safety_matrix --fast          # the cases that load no model (a few minutes)
    python -m tests.safety_matrix --quick         # the subset `make test` runs (about a minute)
    python -m tests.safety_matrix -k eval.run -v  # one command, with each failure's details
    python -m tests.safety_matrix --list          # the cases and what each expects

`tests/test_safety_matrix.py` runs the same cases under pytest (the model cases marked slow).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mrtasks.output import OWNER_LOCK  # the lock a running command holds in its folder

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared" / "data"
BENCHMARKS = SHARED / "benchmarks"
CORPORA = SHARED / "corpora"
HELDOUT = REPO_ROOT / "tests" / "data" / "equivalence_heldout.jsonl"
VERDICTS = ("good", "traceback", "silent_wrong", "lost_files", "other")
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
           "TOKENIZERS_PARALLELISM": "false", "MRTASKS_REWARD_WORKERS": "2"}

# A training stage in seconds on a CPU: 2 completions per rollout, one optimizer step each.
TRAIN_OVERRIDES = [
    "dtype=float32", "bf16=false", "gradient_checkpointing=false", "num_generations=2",
    "per_device_train_batch_size=2", "rollout_batch_prompts=1", "mini_batch_prompts=1",
    "max_completion_length=8", "max_steps=2", "save_steps=1", "logging_steps=1", "learning_rate=1e-5",
    "max_train_samples=4", "max_prompt_length=4096", "seed=0",
]
STAGE = "stage1_masked_then_fill"
EVAL_ARGS = ["--benchmark-dir", str(BENCHMARKS), "--benchmarks", "aime24", "amc23", "--max-problems", "2", "--n", "2",
             "--k", "1", "2", "--max-new-tokens", "8", "--backend", "transformers", "--problems-per-call", "1"]


# --- files ----------------------------------------------------------------------------------------


def snapshot(root: Path) -> dict[str, str]:
    """sha256 of every file under `root` (symlinks by target), by relative path."""
    out = {}
    if not root.exists():
        return out
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_symlink():
            out[rel] = "link:" + os.readlink(p)
        elif p.is_file():
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
        elif p.is_dir():
            out[rel + "/"] = "dir"
    return out


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


def jsonl(path: Path, rows: list[Any]) -> Path:
    return write(path, "".join(json.dumps(r) + "\n" for r in rows))


BINARY = bytes(range(256)) * 8 + b"\x00\xff\xfe"


# --- fixtures -------------------------------------------------------------------------------------


class Fixtures:
    """Things a user already has, made once per matrix run (lazily) and checked unchanged after it."""

    def __init__(self, root: Path, env: dict[str, str]):
        self.root = root
        self.env = env
        self._lock = threading.RLock()
        self._made: dict[str, Path] = {}
        self.snapshots: dict[str, dict[str, str]] = {}

    def _run(self, *argv: str, timeout: int = 900) -> None:
        proc = subprocess.run([sys.executable, "-m", *argv], cwd=REPO_ROOT, env=self.env, capture_output=True,
                              text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"fixture {' '.join(argv[:1])} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")

    def get(self, name: str) -> Path:
        with self._lock:
            if name not in self._made:
                path = self.root / name
                getattr(self, f"_make_{name}")(path)
                self._made[name] = path
                self.snapshots[name] = snapshot(path)
            return self._made[name]

    def _make_build(self, path: Path) -> None:
        self._run("mrtasks.build", "--out", str(path), "--no-progress")

    def _make_model(self, path: Path) -> None:
        self._run("training.tiny_model", str(path), "--vocab-size", "512", "--hidden-size", "32")

    def _make_eval(self, path: Path) -> None:
        self._run("eval.run", "--model", str(self.get("model")), *EVAL_ARGS, "--output-dir", str(path))

    def _make_train(self, path: Path) -> None:
        self._run("training.run", *train_args(self.get("build"), self.get("model"), path))

    def changed(self) -> list[str]:
        """Fixtures whose files changed since they were made."""
        return [name for name, snap in self.snapshots.items() if snapshot(self._made[name]) != snap]


def train_args(build: Path, model: Path, out: Path, *extra: str) -> list[str]:
    return ["--recipe", "qwen2.5-3b", "--stage", "1", "--task", "masked_then_fill", "--dataset", str(build),
            "--output-dir", str(out), f"model_name_or_path={model}", *TRAIN_OVERRIDES, *extra]


# --- cases ----------------------------------------------------------------------------------------


@dataclass
class Ctx:
    """What a case's functions see: its folder, the fixtures, and (while it runs) its output."""

    dir: Path
    fx: Fixtures
    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)
    started: float = 0.0
    first: subprocess.Popen | None = None

    def fixture(self, name: str) -> Path:
        return self.fx.get(name)

    def copy(self, name: str, dest: str) -> Path:
        """A private copy of a fixture in the case folder (the case may change it)."""
        target = self.dir / dest
        shutil.copytree(self.fixture(name), target, symlinks=True)
        return target

    @property
    def stdout(self) -> str:
        return "".join(self.out)

    @property
    def stderr(self) -> str:
        return "".join(self.err)


@dataclass
class Case:
    command: str
    """The label (`eval.run`); `module` is what runs (`python -m module`)."""
    name: str
    args: Callable[[Ctx], list[str]]
    code: int
    words: str = ""
    """A regular expression the last stderr line must match (case-insensitive), for failures."""
    module: str = ""
    setup: Callable[[Ctx], None] | None = None
    check: Callable[[Ctx], str | None] | None = None
    """For a run that must succeed (or be refused): a wrong result, or None when it is right."""
    may_change: tuple[str, ...] = ()
    """Files of the case folder (glob patterns) the command may change."""
    interrupt: Callable[[Ctx], bool] | None = None
    """SIGINT the process group once this is true."""
    first: Callable[[Ctx], list[str]] | None = None
    """A command started before this one, which holds the output while this one runs (concurrency)."""
    first_ready: Callable[[Ctx], bool] | None = None
    release_first: Callable[[Ctx], None] | None = None
    first_env: Callable[[Ctx], dict[str, str]] | None = None
    cwd: Callable[[Ctx], Path] | None = None
    env: dict[str, str] = field(default_factory=dict)
    needs: tuple[str, ...] = ()
    slow: bool = False
    timeout: float = 300

    def __post_init__(self) -> None:
        self.module = self.module or self.command
        self.slow = self.slow or any(n in ("model", "eval", "train") for n in self.needs)

    @property
    def id(self) -> str:
        return f"{self.command}: {self.name}"


@dataclass
class Result:
    case: str
    verdict: str
    code: int | None
    detail: str
    seconds: float


def _reader(stream: Any, sink: list[str]) -> None:
    for line in iter(stream.readline, ""):
        sink.append(line)
    stream.close()


def _popen(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            errors="replace", start_new_session=True)


def _stop(proc: subprocess.Popen, timeout: float = 60) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(timeout=timeout)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()


def _wait_until(pred: Callable[[], bool], proc: subprocess.Popen, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        if proc.poll() is not None:
            return pred()
        time.sleep(0.05)
    return False


def _diff(before: dict[str, str], after: dict[str, str], allowed: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(pre-existing files changed or gone, new files), leaving out allowed patterns."""
    def ok(name: str) -> bool:
        return any(Path(name.rstrip("/")).match(p) or name.startswith(p.rstrip("*")) for p in allowed)

    lost = [k for k, v in before.items() if after.get(k) != v and not k.endswith("/") and not ok(k)]
    lost += [k for k in before if k.endswith("/") and k not in after and not ok(k)]
    new = [k for k in after if k not in before and not ok(k)]
    return sorted(lost), sorted(new)


def run_case(case: Case, fx: Fixtures, base_env: dict[str, str], root: Path) -> Result:
    start = time.monotonic()
    slug = re.sub(r"[^A-Za-z0-9]+", "-", case.id).strip("-")[:80]
    d = Path(tempfile.mkdtemp(prefix=f"{slug}-", dir=root))
    ctx = Ctx(dir=d, fx=fx)
    env = {**base_env, **case.env}
    first = None
    try:
        for name in case.needs:
            fx.get(name)
        if case.setup:
            case.setup(ctx)
        (d / "work").mkdir(exist_ok=True)
        argv = [sys.executable, "-m", case.module, *case.args(ctx)]  # may write the user's files
        first_argv = [sys.executable, "-m", case.module, *case.first(ctx)] if case.first else None
        cwd = case.cwd(ctx) if case.cwd else REPO_ROOT
        before = snapshot(d)
        if first_argv:
            first_env = {**env, **(case.first_env(ctx) if case.first_env else {})}
            first = _popen(first_argv, REPO_ROOT, first_env)
            ctx.first = first
            fout: list[str] = []
            ferr: list[str] = []
            for stream, sink in ((first.stdout, fout), (first.stderr, ferr)):
                threading.Thread(target=_reader, args=(stream, sink), daemon=True).start()
            if not _wait_until(lambda: case.first_ready(ctx), first, 600):
                return Result(case.id, "other", None, "the first run never got going: " + "".join(ferr)[-800:],
                              time.monotonic() - start)
        ctx.started = time.monotonic()
        proc = _popen(argv, cwd, env)
        readers = [threading.Thread(target=_reader, args=(s, k), daemon=True)
                   for s, k in ((proc.stdout, ctx.out), (proc.stderr, ctx.err))]
        for t in readers:
            t.start()
        hung = False
        if case.interrupt is not None:
            if _wait_until(lambda: case.interrupt(ctx), proc, case.timeout):
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGINT)
            else:
                hung = proc.poll() is None
        try:
            proc.wait(timeout=case.timeout)
        except subprocess.TimeoutExpired:
            hung = True
            _stop(proc, 10)
        for t in readers:
            t.join(10)
        if first is not None:
            if case.release_first:
                case.release_first(ctx)
            try:
                first.wait(timeout=600)
            except subprocess.TimeoutExpired:
                _stop(first)
        time.sleep(0.05)
        verdict, detail = judge(case, ctx, proc.returncode, hung, before, snapshot(d), fx)
        return Result(case.id, verdict, proc.returncode, detail, time.monotonic() - start)
    except Exception as e:  # noqa: BLE001 - a broken case is reported, not fatal to the matrix
        return Result(case.id, "other", None, f"the case itself failed: {type(e).__name__}: {e}", time.monotonic() - start)
    finally:
        if first is not None:
            _stop(first)
        shutil.rmtree(d, ignore_errors=True)


ERROR_LINE = re.compile(r"^(?:[\w.\- ]+: )?error: ")  # `error: ...`, or argparse's `prog: error: ...`


def last_line(text: str) -> str:
    lines = [line for line in text.replace("\r", "\n").splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def judge(case: Case, ctx: Ctx, code: int | None, hung: bool, before: dict[str, str], after: dict[str, str],
          fx: Fixtures) -> tuple[str, str]:
    err = ctx.stderr
    lost, new = _diff(before, after, case.may_change)
    broken = fx.changed()
    if broken:
        return "lost_files", f"fixture(s) changed: {broken}"
    if lost:
        return "lost_files", f"changed or removed: {lost[:5]}"
    if "Traceback (most recent call last)" in err:
        return "traceback", last_line(err)[:300]
    if hung:
        return "other", "hung (timeout)"
    if case.code != 0 and code == 0:
        return "silent_wrong", f"exit 0 where {case.code} was due; stdout ends {last_line(ctx.stdout)[:200]!r}"
    if case.check is not None:
        problem = case.check(ctx)
        if problem:
            return "silent_wrong" if code == 0 else "other", problem
    if code != case.code:
        return "other", f"exit {code}, expected {case.code}: {last_line(err)[:300]}"
    if case.code != 0:
        line = last_line(err)
        if not ERROR_LINE.match(line) or not re.search(case.words, line, re.I):
            return "other", f"last stderr line does not name the problem ({case.words!r}): {line[:300]!r}"
        if new:
            return "other", f"a failed run left files behind: {new[:5]}"
    return "good", ""


# --- the cases ------------------------------------------------------------------------------------

CASES: list[Case] = []


def case(command: str, name: str, args: Callable[[Ctx], list[str]] | list[str], code: int, words: str = "",
         **kw: Any) -> Case:
    fn = args if callable(args) else (lambda _ctx, a=list(args): list(a))
    c = Case(command, name, fn, code, words, **kw)
    CASES.append(c)
    return c


def file_in(ctx: Ctx, name: str, data: str | bytes) -> str:
    return str(write(ctx.dir / name, data))


def exists(path_fn: Callable[[Ctx], Path]) -> Callable[[Ctx], bool]:
    return lambda ctx: path_fn(ctx).exists()


def after(seconds: float) -> Callable[[Ctx], bool]:
    return lambda ctx: time.monotonic() - ctx.started > seconds


def in_output(pattern: str, stream: str = "err") -> Callable[[Ctx], bool]:
    return lambda ctx: re.search(pattern, ctx.stderr if stream == "err" else ctx.stdout) is not None


def user_folder(ctx: Ctx, name: str = "mine") -> Path:
    """A folder of the user's own files (notes, results) that no command may touch."""
    d = ctx.dir / name
    write(d / "notes.md", "my notes\n")
    write(d / "results" / "table.csv", "a,b\n1,2\n")
    return d


INTERRUPTED = r"interrupt"

# --- mrtasks.build (the model the others follow) ----------------------------------------------------

B = "mrtasks.build"


def _build(ctx: Ctx, *extra: str) -> list[str]:
    return ["--out", str(ctx.dir / "work" / "tasks"), "--no-progress", *extra]


case(B, "--out . (the project folder)", ["--out", ".", "--no-progress"], 4, r"current folder")
case(B, "--out a folder of the user's files", lambda c: ["--out", str(user_folder(c)), "--no-progress"], 4, r"not empty")
case(B, "--out a file", lambda c: ["--out", file_in(c, "f.txt", "keep"), "--no-progress"], 4, r"not a folder")
case(B, "--out below a file", lambda c: ["--out", file_in(c, "f.txt", "keep") + "/sub", "--no-progress"], 4,
     r"not a folder")
case(B, "--out a model folder", lambda c: ["--out", str(c.copy("model", "model")), "--no-progress"], 4, r"not empty",
     needs=("model",))
case(B, "--source a missing file", lambda c: _build(c, "--source", str(c.dir / "nope.jsonl")), 2, r"not found")
case(B, "--source a 0-byte file", lambda c: _build(c, "--source", file_in(c, "empty.jsonl", "")), 2, r"empty|0-byte|no rows")
case(B, "--source a corrupt Parquet file", lambda c: _build(c, "--source", file_in(c, "bad.parquet", BINARY)), 2,
     r"parquet")
case(B, "--source an unknown option (limt=5)", lambda c: _build(c, "--source", "sample:limt=5"), 2, r"limt")
case(B, "--source a misspelt mapping field (problme=)",
     lambda c: _build(c, "--source", jsonl_source(c) + ":problme=question,solution=answer"), 2, r"problme")
case(B, "--source name= with a |", lambda c: _build(c, "--source", "sample:name=a|b"), 2, r"name")
case(B, "--source name= with a newline", lambda c: _build(c, "--source", "sample:name=a\nb"), 2, r"name")
case(B, "--source limit=abc", lambda c: _build(c, "--source", "sample:limit=abc"), 2, r"limit")
case(B, "--limit 0", lambda c: _build(c, "--limit", "0"), 2, r"--limit")
case(B, "--seed not a number", lambda c: _build(c, "--seed", "x"), 2, r"--seed")
case(B, "--card-template missing", lambda c: _build(c, "--card-template", str(c.dir / "nope.md")), 2, r"template")
case(B, "--benchmarks a missing file", lambda c: _build(c, "--benchmarks", str(c.dir / "nope.jsonl")), 2, r"nope")
case(B, "every source row dropped (mapping typo)",
     lambda c: _build(c, "--source", jsonl_source(c) + ":problem=nope"), 3, r"every source row was dropped")
case(B, "a Hub source offline", lambda c: _build(c, "--source", "deepmath:limit=2"), 2, r"cannot load|offline")


def jsonl_source(ctx: Ctx) -> str:
    return str(jsonl(ctx.dir / "qa.jsonl", [{"question": f"What is ${i}+1$?", "answer": f"It is ${i + 1}$."}
                                            for i in range(3)]))


def _previous_build(ctx: Ctx) -> None:
    ctx.copy("build", "work/tasks")


case(B, "Ctrl-C while building over a previous build", lambda c: _build(c, "--source", f"corpora:{CORPORA}"), 130,
     INTERRUPTED, setup=_previous_build, interrupt=after(4), needs=("build",), timeout=300)


def _check_build_mode(ctx: Ctx) -> str | None:
    out = ctx.dir / "work" / "tasks"
    mode = out.stat().st_mode & 0o777
    if mode != 0o755:
        return f"the build folder has mode {oct(mode)}, not 0o755 (umask 022)"
    locks = sorted(p.name for p in out.parent.iterdir() if p.name.endswith(".lock"))
    if locks:
        return f"lock file(s) left after the run: {locks}"
    return None


case(B, "a build keeps the user's umask and leaves no lock file", lambda c: _build(c), 0, check=_check_build_mode)


# The first build waits at `pipeline_done` (lock held) until `go` exists: the build's own test hook.
case(B, "a second build into the same folder", lambda c: _build(c), 4, r"another build",
     first=lambda c: _build(c), first_env=lambda c: {"MRTASKS_BUILD_FAULT": f"pipeline_done:wait={c.dir / 'go'}"},
     first_ready=lambda c: any(p.name.startswith(".tasks.tmp-") for p in (c.dir / "work").iterdir()),
     release_first=lambda c: (c.dir / "go").touch(), may_change=("work/*", "go"))

# --- mrtasks.rewards.audit --------------------------------------------------------------------------

A = "mrtasks.rewards.audit"


def _corrupt_build(ctx: Ctx) -> None:
    b = ctx.copy("build", "b")
    shard = sorted((b / "data" / "masked_then_fill").glob("*.parquet"))[0]
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])


def _no_card(ctx: Ctx) -> None:
    (ctx.copy("build", "b") / "README.md").unlink()


def _broken_yaml(ctx: Ctx) -> None:
    readme = ctx.copy("build", "b") / "README.md"
    readme.write_text(readme.read_text().replace("configs:", "configs: [\n  - {{", 1))


case(A, "--dataset missing", lambda c: ["--dataset", str(c.dir / "nope")], 2, r"nope")
case(A, "--dataset an empty folder", lambda c: ["--dataset", str((c.dir / "empty").resolve())], 2, r"not a build|empty",
     setup=lambda c: (c.dir / "empty").mkdir())
case(A, "--dataset a folder that is not a build", lambda c: ["--dataset", str(user_folder(c))], 2, r"not a build")
case(A, "--dataset a file", lambda c: ["--dataset", file_in(c, "f.jsonl", "{}\n")], 2, r"not a folder|not a build")
case(A, "--dataset a model folder", lambda c: ["--dataset", str(c.fixture("model"))], 2, r"not a build",
     needs=("model",))
case(A, "--dataset with a corrupt Parquet file", lambda c: ["--dataset", str(c.dir / "b")], 2, r"parquet|cannot",
     setup=_corrupt_build, needs=("build",))
case(A, "--dataset without its card", lambda c: ["--dataset", str(c.dir / "b")], 2, r"README|card",
     setup=_no_card, needs=("build",))
case(A, "--dataset with broken card YAML", lambda c: ["--dataset", str(c.dir / "b")], 2, r"YAML|card",
     setup=_broken_yaml, needs=("build",))
case(A, "--task unknown", lambda c: ["--dataset", str(c.fixture("build")), "--task", "mask_fil"], 2, r"mask_fil",
     needs=("build",))
case(A, "--split unknown", lambda c: ["--dataset", str(c.fixture("build")), "--split", "tets"], 2, r"tets",
     needs=("build",))
case(A, "--out a file", lambda c: ["--dataset", str(c.fixture("build")), "--out", file_in(c, "f.txt", "keep"),
                                   "--task", "outcome"], 4, r"--out", needs=("build",))
case(A, "--out below a file", lambda c: ["--dataset", str(c.fixture("build")), "--task", "outcome",
                                         "--out", file_in(c, "f.txt", "keep") + "/sub"], 4, r"--out", needs=("build",))


def _check_audit_out(ctx: Ctx) -> str | None:
    out = ctx.dir / "work" / "audit"
    if not (out / "audit.json").is_file():
        return "no audit.json in --out"
    data = json.loads((out / "audit.json").read_text())
    if not data.get("results"):
        return "audit.json has no results"
    return None


case(A, "a build with --out", lambda c: ["--dataset", str(c.fixture("build")), "--task", "outcome",
                                         "--out", str(c.dir / "work" / "audit")], 0,
     check=_check_audit_out, needs=("build",))
case(A, "Ctrl-C while scoring", lambda c: ["--dataset", str(c.fixture("build"))], 130, INTERRUPTED,
     interrupt=in_output(r"rows"), needs=("build",))

# --- mrtasks.rewards.bench ----------------------------------------------------------------------------

RB = "mrtasks.rewards.bench"
MATH500 = str(BENCHMARKS / "math500.jsonl")
case(RB, "-n 0", ["--answers", MATH500, "-n", "0"], 2, r"-n")
case(RB, "-n negative", ["--answers", MATH500, "-n", "-5"], 2, r"-n")
case(RB, "--chunk 0", ["--answers", MATH500, "-n", "16", "--chunk", "0"], 2, r"--chunk")
case(RB, "--chunk negative", ["--answers", MATH500, "-n", "16", "--chunk", "-3"], 2, r"--chunk")
case(RB, "--odd-rows negative", ["--answers", MATH500, "-n", "16", "--odd-rows", "-1"], 2, r"--odd-rows")
case(RB, "--answers missing", lambda c: ["--answers", str(c.dir / "nope.jsonl")], 2, r"nope")
case(RB, "--answers an empty file", lambda c: ["--answers", file_in(c, "e.jsonl", "")], 2, r"answer")
case(RB, "--answers a binary file", lambda c: ["--answers", file_in(c, "b.jsonl", BINARY)], 2, r"answer|UTF-8|JSON")
case(RB, "--answers a folder", lambda c: ["--answers", str(c.dir)], 2, r"file|folder")
case(RB, "a small run", ["--answers", MATH500, "-n", "32", "--odd-rows", "0", "--skip-mathruler"], 0,
     check=lambda c: None if "items/s" in c.stdout else "no timing table")
case(RB, "Ctrl-C while scoring", ["--answers", MATH500, "-n", "8192", "--skip-mathruler"], 130, INTERRUPTED,
     interrupt=in_output(r"worker pool", "out"), timeout=600)

# --- mrtasks.rewards.accuracy --------------------------------------------------------------------------

AC = "mrtasks.rewards.accuracy"
PAIR = {"reference": "1/2", "prediction": "0.5", "equal": True}


def pairs(ctx: Ctx, rows: list[Any], name: str = "p.jsonl") -> str:
    return str(jsonl(ctx.dir / name, rows))


case(AC, "missing file", lambda c: [str(c.dir / "nope.jsonl")], 2, r"nope")
case(AC, "an empty file", lambda c: [file_in(c, "e.jsonl", "")], 2, r"no pairs|empty")
case(AC, "equal is the string \"false\"",
     lambda c: [pairs(c, [PAIR, {**PAIR, "prediction": "2", "equal": "false"}]), "--checkers", "mrtasks"], 2, r"equal")
case(AC, "equal is 1", lambda c: [pairs(c, [{**PAIR, "equal": 1}]), "--checkers", "mrtasks"], 2, r"equal")
case(AC, "--checkers empty", lambda c: [pairs(c, [PAIR]), "--checkers", ""], 2, r"--checkers")
case(AC, "--checkers unknown", lambda c: [pairs(c, [PAIR]), "--checkers", "mathverify"], 2, r"mathverify")
case(AC, "a row without prediction", lambda c: [pairs(c, [{"reference": "1", "equal": True}])], 2, r"prediction")
case(AC, "a binary file", lambda c: [file_in(c, "b.jsonl", BINARY)], 2, r"UTF-8|JSON")
case(AC, "a truncated last line", lambda c: [file_in(c, "t.jsonl", json.dumps(PAIR) + "\n" + json.dumps(PAIR)[:20])], 2,
     r":2")
case(AC, "a folder", lambda c: [str(c.dir)], 2, r"file|folder")
case(AC, "reference is a number", lambda c: [pairs(c, [{**PAIR, "reference": 0.5}]), "--checkers", "mrtasks"], 2,
     r"reference")
case(AC, "three pairs", lambda c: [pairs(c, [PAIR, PAIR, {**PAIR, "prediction": "2", "equal": False}]),
                                   "--checkers", "mrtasks"], 0,
     check=lambda c: None if re.search(r"^3 pairs", c.stdout, re.M) and "100.00%" in c.stdout else "wrong report")
case(AC, "Ctrl-C while checking", lambda c: [file_in(c, "many.jsonl", HELDOUT.read_text() * 40), "--checkers", "mrtasks"],
     130, INTERRUPTED, interrupt=in_output(r"pairs \(", "out"))

# --- mrtasks.curate.annotator_bench ---------------------------------------------------------------------

AB = "mrtasks.curate.annotator_bench"
GOLD = REPO_ROOT / "tests" / "data" / "annotator_gold.jsonl"


def _other_cwd(ctx: Ctx) -> Path:
    d = ctx.dir / "elsewhere"
    d.mkdir(exist_ok=True)
    return d


case(AB, "run from another folder", ["--json"], 0, cwd=_other_cwd,
     check=lambda c: None if '"heldout"' in c.stdout else "no figures")
case(AB, "--fixture missing", lambda c: ["--fixture", str(c.dir / "nope.jsonl")], 2, r"nope")
case(AB, "--fixture truncated", lambda c: ["--fixture", file_in(c, "g.jsonl", GOLD.read_text()[:3000])], 2,
     r"g\.jsonl")
case(AB, "--fixture binary", lambda c: ["--fixture", file_in(c, "g.jsonl", BINARY)], 2, r"UTF-8|JSON")
case(AB, "--fixture empty", lambda c: ["--fixture", file_in(c, "g.jsonl", "")], 2, r"no .*rows|empty")
case(AB, "--corpora missing", lambda c: ["--corpora", str(c.dir / "nope")], 2, r"nope")
case(AB, "--corpora an empty folder", lambda c: ["--corpora", str(c.dir / "empty")], 2, r"corpus|corpora",
     setup=lambda c: (c.dir / "empty").mkdir())


def _truncated_corpora(ctx: Ctx) -> None:
    d = ctx.dir / "corpora"
    d.mkdir()
    for f in CORPORA.iterdir():
        data = f.read_bytes()
        (d / f.name).write_bytes(data[: len(data) // 3])


case(AB, "--corpora with truncated files", lambda c: ["--corpora", str(c.dir / "corpora")], 2, r"corpora|not found|truncated",
     setup=_truncated_corpora)

# --- mrtasks.curate.bench ---------------------------------------------------------------------------------

CB = "mrtasks.curate.bench"
case(CB, "run from another folder", ["--repeat", "1", "--source", "sample"], 0, cwd=_other_cwd,
     check=lambda c: None if "traj/s" in c.stdout else "no throughput table")
case(CB, "default corpora from another folder", ["--repeat", "1"], 0, cwd=_other_cwd,
     check=lambda c: None if "traj/s" in c.stdout else "no throughput table")
case(CB, "--corpora missing", lambda c: ["--corpora", str(c.dir / "nope")], 2, r"nope")
case(CB, "--corpora an empty folder", lambda c: ["--corpora", str(c.dir / "empty")], 2, r"corpus|corpora",
     setup=lambda c: (c.dir / "empty").mkdir())
case(CB, "--source a missing file", lambda c: ["--source", str(c.dir / "nope.jsonl")], 2, r"nope")
case(CB, "--source a binary file", lambda c: ["--source", file_in(c, "b.jsonl", BINARY), "--repeat", "1"], 2,
     r"no rows|dropped|b\.jsonl")
case(CB, "--source an unknown option", ["--source", "sample:limt=5", "--repeat", "1"], 2, r"limt")
case(CB, "--repeat 0", ["--repeat", "0"], 2, r"--repeat")
case(CB, "Ctrl-C while timing", ["--repeat", "3", "--source", f"corpora:{CORPORA}"], 130, INTERRUPTED,
     interrupt=after(3))

# --- mrtasks.curate.llm_bench -------------------------------------------------------------------------------

LB = "mrtasks.curate.llm_bench"
case(LB, "--trajectories 0", ["--trajectories", "0"], 2, r"--trajectories")
case(LB, "--concurrency 0", ["--concurrency", "0"], 2, r"--concurrency")
case(LB, "--latency negative", ["--latency", "-1"], 2, r"--latency")
case(LB, "--json in a missing folder", lambda c: ["--latency", "0", "--trajectories", "2", "--concurrency", "1",
                                                  "--json", str(c.dir / "no" / "such" / "r.json")], 4, r"--json")
case(LB, "--json a folder", lambda c: ["--latency", "0", "--trajectories", "2", "--concurrency", "1",
                                       "--json", str(c.dir)], 4, r"--json")
case(LB, "a small run", lambda c: ["--latency", "0.01", "--trajectories", "4", "--concurrency", "1", "2",
                                   "--json", str(c.dir / "work" / "r.json")], 0,
     check=lambda c: None if (c.dir / "work" / "r.json").is_file() and "calls/s" in c.stdout else "no table or JSON")
case(LB, "Ctrl-C while calling", ["--latency", "0.2", "--trajectories", "32", "--concurrency", "1"], 130, INTERRUPTED,
     interrupt=after(4))

# --- mrtasks.curate.batch ------------------------------------------------------------------------------------

BT = "mrtasks.curate.batch"
DEAD = ["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0"]


def _requests(ctx: Ctx) -> Path:
    """A batch input file as `export` writes it (two requests)."""
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}], "max_tokens": 8}
    return jsonl(ctx.dir / "requests.jsonl", [{"custom_id": f"formulas-{i}", "method": "POST", "url": "/v1/chat/completions",
                                                "body": body} for i in ("a" * 64, "b" * 64)])


case(BT, "export without a source", lambda c: ["export", *DEAD, "--out", str(c.dir / "work" / "r.jsonl")], 2,
     r"--source or --fixture")
case(BT, "export without --model", lambda c: ["export", "--source", "sample", "--out", str(c.dir / "work" / "r.jsonl")],
     2, r"--model")
case(BT, "export --out a folder", lambda c: ["export", "--source", "sample", *DEAD, "--out", str(c.dir)], 4, r"--out")
case(BT, "export --out a file of the user's", lambda c: ["export", "--source", "sample", *DEAD, "--out",
                                                         file_in(c, "notes.txt", "my notes\n")], 4, r"not written by")
case(BT, "export --source a missing file", lambda c: ["export", "--source", str(c.dir / "nope.jsonl"), *DEAD, "--out",
                                                      str(c.dir / "work" / "r.jsonl")], 2, r"nope")
case(BT, "export --source an unknown option", lambda c: ["export", "--source", "sample:limt=5", *DEAD, "--out",
                                                         str(c.dir / "work" / "r.jsonl")], 2, r"limt")
case(BT, "export the sample", lambda c: ["export", "--source", "sample", *DEAD, "--cache", str(c.dir / "work" / "c.sqlite"),
                                         "--out", str(c.dir / "work" / "r.jsonl")], 0,
     check=lambda c: None if (c.dir / "work" / "r.jsonl").read_text().count('"custom_id"') >= 2 else "no requests")
case(BT, "import a missing results file", lambda c: ["import", str(_requests(c)), str(c.dir / "nope.jsonl"),
                                                     "--cache", str(c.dir / "work" / "c.sqlite")], 2, r"nope")
case(BT, "import a binary requests file", lambda c: ["import", file_in(c, "r.jsonl", BINARY),
                                                     file_in(c, "o.jsonl", "{}\n"), "--cache",
                                                     str(c.dir / "work" / "c.sqlite")], 2, r"not a batch request line")
case(BT, "import results that answer nothing", lambda c: ["import", str(_requests(c)),
                                                          file_in(c, "o.jsonl", BINARY + b"\n{\"custom_id\": \"x\"}\n"),
                                                          "--cache", str(c.dir / "work" / "c.sqlite")], 2,
     r"no line .* answers")
case(BT, "import --cache a file that is not sqlite", lambda c: [
    "import", str(_requests(c)),
    file_in(c, "o.jsonl", json.dumps({"custom_id": "formulas-" + "a" * 64, "error": None, "response": {
        "status_code": 200, "body": {"choices": [{"message": {"content": "{}"}}]}}}) + "\n"),
    "--cache", file_in(c, "c.sqlite", "not a database\n")], 2, r"sqlite|cache")

# --- eval.run -------------------------------------------------------------------------------------------------

E = "eval.run"


def _eval(ctx: Ctx, out: Path | str, *extra: str, model: Path | None = None) -> list[str]:
    return ["--model", str(model or ctx.fixture("model")), *EVAL_ARGS, "--output-dir", str(out), *extra]


def _mine_with_eval_names(ctx: Ctx) -> Path:
    d = ctx.dir / "mine"
    write(d / "table.md", "| my | table |\n")
    write(d / "summary.json", '{"mine": true}\n')
    write(d / "passk.png", b"\x89PNG my plot")
    return d


case(E, "--n 0", lambda c: ["--model", str(c.dir / "m"), "--n", "0", "--output-dir", str(c.dir / "o")], 2, r"n must")
case(E, "--k 0", lambda c: ["--model", str(c.dir / "m"), "--k", "0", "--output-dir", str(c.dir / "o")], 2, r"k ")
case(E, "--max-problems 0", lambda c: ["--model", "x/y", "--max-problems", "0", "--output-dir", str(c.dir / "o")], 2,
     r"max_problems")
case(E, "--temperature negative", lambda c: ["--model", "x/y", "--temperature", "-1", "--output-dir", str(c.dir / "o")],
     2, r"temperature")
case(E, "--hub-revision without =", lambda c: ["--model", "x/y", "--hub-revision", "aime24", "--output-dir",
                                                str(c.dir / "o")], 2, r"NAME=VALUE")
case(E, "a Hub benchmark offline", lambda c: _eval(c, c.dir / "work" / "o", "--benchmark-dir", "", "--benchmarks", "aime24"),
     3, r"aime24", needs=("model",))
case(E, "--benchmarks the same name twice", lambda c: _eval(c, c.dir / "work" / "o", "--benchmarks", "aime24", "aime24"),
     3, r"twice", needs=("model",))
case(E, "a Hub model offline", lambda c: ["--model", "Qwen/Qwen2.5-3B", *EVAL_ARGS, "--output-dir", str(c.dir / "work" / "o")],
     5, r"Qwen2.5-3B", slow=True)
case(E, "--model a missing path", lambda c: _eval(c, c.dir / "work" / "o", model=c.dir / "no-model"), 5, r"does not exist",
     needs=("model",))
case(E, "--model a folder without weights", lambda c: _eval(c, c.dir / "work" / "o", model=c.dir / "m"), 5, r"model",
     setup=lambda c: [p.unlink() for p in c.copy("model", "m").glob("*.safetensors")], needs=("model",))
case(E, "--benchmark-dir missing", lambda c: _eval(c, c.dir / "work" / "o", "--benchmark-dir", str(c.dir / "nope")), 3,
     r"nope", needs=("model",))
case(E, "--benchmarks NAME=missing file", lambda c: _eval(c, c.dir / "work" / "o", "--benchmarks", f"x={c.dir}/x.jsonl"),
     3, r"x\.jsonl", needs=("model",))
case(E, "a binary benchmark file", lambda c: _eval(c, c.dir / "work" / "o", "--benchmarks",
                                                   "x=" + file_in(c, "x.jsonl", BINARY)), 3, r"x\.jsonl",
     needs=("model",))
case(E, "a truncated benchmark file",
     lambda c: _eval(c, c.dir / "work" / "o", "--benchmarks",
                     "x=" + file_in(c, "x.jsonl", (BENCHMARKS / "amc23.jsonl").read_text()[:1500])), 3, r"x\.jsonl",
     needs=("model",))
case(E, "--stop-tokens unknown", lambda c: _eval(c, c.dir / "work" / "o", "--stop-tokens", "<|nope|>"), 2,
     r"--stop-tokens", needs=("model",))
case(E, "--output-dir a file", lambda c: _eval(c, file_in(c, "f.txt", "keep")), 4, r"not a folder|--output-dir",
     needs=("model",))
case(E, "--output-dir below a file", lambda c: _eval(c, file_in(c, "f.txt", "keep") + "/o"), 4, r"not a folder|--output-dir",
     needs=("model",))
case(E, "--output-dir the model folder", lambda c: _eval(c, c.dir / "m", model=c.dir / "m"), 4, r"model",
     setup=lambda c: c.copy("model", "m"), needs=("model",))
case(E, "--output-dir the model folder with --overwrite", lambda c: _eval(c, c.dir / "m", "--overwrite", model=c.dir / "m"),
     4, r"model", setup=lambda c: c.copy("model", "m"), needs=("model",))
case(E, "--output-dir a folder with the user's table.md/summary.json/passk.png",
     lambda c: _eval(c, _mine_with_eval_names(c)), 4, r"mine|did not write|not empty", needs=("model",))
case(E, "--output-dir the user's folder with --overwrite",
     lambda c: _eval(c, _mine_with_eval_names(c), "--overwrite"), 4, r"mine|did not write|not empty", needs=("model",))
case(E, "--output-dir a dataset build", lambda c: _eval(c, c.dir / "b"), 4, r"build",
     setup=lambda c: c.copy("build", "b"), needs=("model", "build"))


def _foreign_in_eval(ctx: Ctx) -> None:
    write(ctx.copy("eval", "e") / "my-notes.md", "mine\n")


case(E, "an eval folder holding a file eval did not write, with --overwrite", lambda c: _eval(c, c.dir / "e", "--overwrite"),
     4, r"my-notes", setup=_foreign_in_eval, needs=("eval",))
case(E, "resume with another temperature", lambda c: _eval(c, c.dir / "e", "--temperature", "1.0"), 4, r"temperature",
     setup=lambda c: c.copy("eval", "e"), needs=("eval",))


def _check_overwrite(ctx: Ctx) -> str | None:
    cfg = json.loads((ctx.dir / "e" / "config.json").read_text())
    return None if cfg.get("temperature") == 1.0 else "config.json still holds the old settings"


case(E, "--overwrite its own folder with another temperature", lambda c: _eval(c, c.dir / "e", "--temperature", "1.0",
                                                                              "--overwrite"), 0,
     setup=lambda c: c.copy("eval", "e"), may_change=("e/*",), check=_check_overwrite, needs=("eval",))


def _sample_keys(path: Path) -> Counter:
    keys: Counter = Counter()
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            keys[(r["benchmark"], r["id"], r["sample"])] += 1
    return keys


def _conflicting_duplicate(ctx: Ctx) -> None:
    samples = ctx.copy("eval", "e") / "samples.jsonl"
    first = json.loads(samples.read_text().splitlines()[0])
    with samples.open("a") as f:
        f.write(json.dumps({**first, "completion": first["completion"] + " and more", "reward": 1.0, "correct": True}) + "\n")


def _check_no_duplicates(ctx: Ctx) -> str | None:
    keys = _sample_keys(ctx.dir / "e" / "samples.jsonl")
    doubled = [k for k, n in keys.items() if n > 1]
    if doubled:
        return f"samples.jsonl still holds {len(doubled)} duplicate sample line(s), e.g. {doubled[0]}"
    summary = json.loads((ctx.dir / "e" / "summary.json").read_text())
    if any(b["num_samples"] != 4 for b in summary["benchmarks"].values()):
        return "summary counts the wrong number of samples"
    if not re.search(r"conflict|duplicate", ctx.stderr, re.I):
        return "no warning names the conflicting lines"
    return None


case(E, "conflicting duplicate sample lines", lambda c: _eval(c, c.dir / "e"), 0, setup=_conflicting_duplicate,
     may_change=("e/*",), check=_check_no_duplicates, needs=("eval",))


def _check_two_runs(ctx: Ctx) -> str | None:
    out = ctx.dir / "work" / "o"
    keys = _sample_keys(out / "samples.jsonl") if (out / "samples.jsonl").exists() else Counter()
    doubled = [k for k, n in keys.items() if n > 1]
    if doubled:
        return f"{len(doubled)} sample(s) written twice"
    return None


def _hold_owned(ctx: Ctx) -> dict[str, str]:
    """The first run waits once it holds its folder (`owned`, the guard's test hook) until `go` exists."""
    return {"MRTASKS_BUILD_FAULT": f"owned:wait={ctx.dir / 'go'}"}


case(E, "a second run into the same folder", lambda c: _eval(c, c.dir / "work" / "o", "--max-problems", "6"), 4,
     r"another|running|lock",
     first=lambda c: _eval(c, c.dir / "work" / "o", "--max-problems", "6"), first_env=_hold_owned,
     first_ready=exists(lambda c: c.dir / "work" / "o" / OWNER_LOCK), release_first=lambda c: (c.dir / "go").touch(),
     check=_check_two_runs, may_change=("work/*", "go"), needs=("model",))


def _check_interrupted_eval(ctx: Ctx) -> str | None:
    old = (ctx.fixture("eval") / "samples.jsonl").read_text()
    now = (ctx.dir / "e" / "samples.jsonl").read_text()
    if not now.startswith(old):
        return "the samples of the previous run were changed"
    if (ctx.dir / "e" / "summary.json").read_bytes() != (ctx.fixture("eval") / "summary.json").read_bytes():
        return "summary.json changed although the run was interrupted"
    return None


case(E, "Ctrl-C while generating (resuming a finished run with more problems)",
     lambda c: _eval(c, c.dir / "e", "--max-problems", "30", "--max-new-tokens", "8"), 130, INTERRUPTED,
     setup=lambda c: c.copy("eval", "e"),
     interrupt=lambda c: (c.dir / "e" / "samples.jsonl").stat().st_size > (c.fixture("eval") / "samples.jsonl").stat().st_size,
     check=_check_interrupted_eval, may_change=("e/samples.jsonl", "e/config.json", "e/.*"), needs=("eval",))


def _check_eval_done(ctx: Ctx) -> str | None:
    out = ctx.dir / "work" / "o"
    for name in ("samples.jsonl", "summary.json", "table.md", "passk.png"):
        if not (out / name).is_file():
            return f"no {name}"
    return None


case(E, "a small run", lambda c: _eval(c, c.dir / "work" / "o"), 0, check=_check_eval_done, needs=("model",))

# --- eval.compare ----------------------------------------------------------------------------------------------

C = "eval.compare"


def _summary(ctx: Ctx) -> str:
    return str(ctx.fixture("eval") / "summary.json")


def _fewer_problems(ctx: Ctx) -> str:
    s = json.loads((ctx.fixture("eval") / "summary.json").read_text())
    for b in s["benchmarks"].values():
        first = sorted(b["correct_counts"])[0]
        b["correct_counts"] = {first: b["correct_counts"][first]}
        b["num_problems"], b["num_samples"] = 1, s["generation"]["n"]
    s["max_problems"] = 1
    return file_in(ctx, "fewer/summary.json", json.dumps(s))


case(C, "a missing summary", lambda c: [str(c.dir / "nope.json")], 2, r"nope")
case(C, "a binary summary", lambda c: [file_in(c, "s.json", BINARY)], 2, r"s\.json")
case(C, "an empty file", lambda c: [file_in(c, "s.json", "")], 2, r"s\.json")
case(C, "a JSON file that is not a summary", lambda c: [file_in(c, "s.json", '{"a": 1}')], 2, r"not a summary")
case(C, "a build's build_stats.json", lambda c: [str(c.fixture("build") / "build_stats.json")], 2, r"not a summary",
     needs=("build",))
case(C, "runs over different problem sets", lambda c: [_summary(c), _fewer_problems(c)], 2, r"problem", needs=("eval",))
case(C, "--labels count mismatch", lambda c: [_summary(c), _summary(c), "--labels", "a"], 2, r"labels", needs=("eval",))
case(C, "--reference out of range", lambda c: [_summary(c), _summary(c), "--reference", "5"], 2, r"--reference",
     needs=("eval",))
case(C, "--plot in a missing folder", lambda c: [_summary(c), _summary(c), "--plot", str(c.dir / "no" / "p.png")], 4,
     r"--plot", needs=("eval",))
case(C, "--plot a folder", lambda c: [_summary(c), _summary(c), "--plot", str(c.dir)], 4, r"--plot", needs=("eval",))
case(C, "--output a folder", lambda c: [_summary(c), _summary(c), "--output", str(c.dir)], 4, r"--output",
     needs=("eval",))
case(C, "--output below a file", lambda c: [_summary(c), _summary(c), "--output", file_in(c, "f", "keep") + "/t.md"], 4,
     r"--output", needs=("eval",))
case(C, "two runs", lambda c: [_summary(c), _summary(c), "--output", str(c.dir / "work" / "t.md")], 0,
     check=lambda c: None if (c.dir / "work" / "t.md").is_file() else "no table written", needs=("eval",))

# --- training.run -------------------------------------------------------------------------------------------------

T = "training.run"
case(T, "no --recipe", [], 2, r"--recipe")
case(T, "an unknown recipe", ["--recipe", "qwen7"], 2, r"qwen7")
case(T, "an unknown override key", ["--recipe", "qwen2.5-3b", "--dry-run", "learnin_rate=1e-5"], 2, r"learnin_rate")
case(T, "an override of the wrong type", ["--recipe", "qwen2.5-3b", "--dry-run", "max_steps=ten"], 2, r"max_steps")
case(T, "an override without =", ["--recipe", "qwen2.5-3b", "--dry-run", "max_steps"], 2, r"key=value")
case(T, "--stage 2 before Stage I", lambda c: ["--recipe", "qwen2.5-3b", "--stage", "2", "--output-dir", str(c.dir / "r")],
     2, r"Stage I")
case(T, "a recipe file that is not YAML", lambda c: ["--recipe", file_in(c, "r.yaml", "a: [\n"), "--dry-run"], 2, r"YAML")
case(T, "--task unknown", ["--recipe", "qwen2.5-3b", "--task", "mask_fill", "--dry-run"], 2, r"mask_fill")
case(T, "--dataset a file", lambda c: train_args(Path(file_in(c, "d.jsonl", "{}\n")), c.fixture("model"), c.dir / "work" / "r"),
     3, r"d\.jsonl|dataset", needs=("model",))
case(T, "a dataset config the build lacks", lambda c: train_args(c.fixture("build"), c.fixture("model"), c.dir / "work" / "r",
                                                              "dataset_config=nope"), 3, r"nope", needs=("build", "model"))
case(T, "the Hub dataset offline", lambda c: [a for a in train_args(c.fixture("build"), c.fixture("model"), c.dir / "work" / "r")
                                              if a not in ("--dataset", str(c.fixture("build")))], 3, r"mr-rlvr/tasks",
     needs=("build", "model"))
case(T, "the recipe's Hub model offline", lambda c: [a for a in train_args(c.fixture("build"), c.fixture("model"), c.dir / "work" / "r")
                                                     if not a.startswith("model_name_or_path=")], 5, r"Qwen",
     needs=("build", "model"))
case(T, "--dataset missing", lambda c: train_args(c.dir / "nope", c.fixture("model"), c.dir / "work" / "r"), 3,
     r"nope|dataset", needs=("model",))
case(T, "--dataset a folder that is not a build", lambda c: train_args(user_folder(c), c.fixture("model"), c.dir / "work" / "r"),
     3, r"cannot load|not a build", needs=("model",))
case(T, "model_name_or_path missing", lambda c: train_args(c.fixture("build"), c.dir / "no-model", c.dir / "work" / "r"), 5,
     r"model path", needs=("build",))
case(T, "bf16 on a CPU", lambda c: [a for a in train_args(c.fixture("build"), c.fixture("model"), c.dir / "work" / "r")
                                    if not a.startswith("bf16=")], 2, r"bf16", needs=("build", "model"))
case(T, "--output-dir a file", lambda c: train_args(c.fixture("build"), c.fixture("model"), file_in(c, "f", "keep")), 4,
     r"not a folder|output", needs=("build", "model"))
case(T, "--output-dir the model folder", lambda c: train_args(c.fixture("build"), c.dir / "m", c.dir / "m"), 4, r"model",
     setup=lambda c: c.copy("model", "m"), needs=("build", "model"))
case(T, "--output-dir a dataset build", lambda c: train_args(c.dir / "b", c.fixture("model"), c.dir / "b"), 4, r"build",
     setup=lambda c: c.copy("build", "b"), needs=("build", "model"))
case(T, "output_dir= a folder of the user's files",
     lambda c: train_args(c.fixture("build"), c.fixture("model"), c.dir / "r", f"output_dir={user_folder(c)}"), 4,
     r"mine|not empty|did not write", needs=("build", "model"))


def _stage_copy(ctx: Ctx) -> Path:
    return ctx.copy("train", "r")


case(T, "a finished stage, the same command again", lambda c: train_args(c.fixture("build"), c.fixture("model"), c.dir / "r"),
     0, setup=_stage_copy, needs=("train",), check=lambda c: None if "finished" in c.stderr else "no word that it was finished")
case(T, "a finished stage, another learning rate",
     lambda c: train_args(c.fixture("build"), c.fixture("model"), c.dir / "r", "learning_rate=1e-4"), 4, r"learning_rate",
     setup=_stage_copy, needs=("train",))


def _interrupted_stage(ctx: Ctx) -> None:
    stage = _stage_copy(ctx) / STAGE
    (stage / "training_summary.json").unlink()
    shutil.rmtree(stage / "checkpoint-2")


case(T, "an interrupted stage resumed with another batch size",
     lambda c: train_args(c.fixture("build"), c.fixture("model"), c.dir / "r", "num_generations=4",
                          "per_device_train_batch_size=4"), 4, r"num_generations|per_device_train_batch_size",
     setup=_interrupted_stage, needs=("train",))
case(T, "an interrupted stage resumed with another learning rate",
     lambda c: train_args(c.fixture("build"), c.fixture("model"), c.dir / "r", "learning_rate=3e-5"), 4, r"learning_rate",
     setup=_interrupted_stage, needs=("train",))


def _check_retrained(ctx: Ctx) -> str | None:
    summary = json.loads((ctx.dir / "r" / STAGE / "training_summary.json").read_text())
    lr = summary.get("run_config", {}).get("learning_rate") or summary.get("settings", {}).get("grpo", {}).get("learning_rate")
    if summary.get("semantics") is None or summary.get("resumed_from"):
        return "the stage was not trained afresh"
    return None if lr in (None, 1e-4) else f"the summary still says learning_rate {lr}"


case(T, "--overwrite a finished stage with another learning rate",
     lambda c: train_args(c.fixture("build"), c.fixture("model"), c.dir / "r", "learning_rate=1e-4", "--overwrite"), 0,
     setup=_stage_copy, may_change=("r/*",), check=_check_retrained, needs=("train",), timeout=600)
case(T, "--overwrite into the model folder",
     lambda c: train_args(c.fixture("build"), c.dir / "m", c.dir / "m", "--overwrite"), 4, r"model",
     setup=lambda c: c.copy("model", "m"), needs=("build", "model"))


def _foreign_in_stage(ctx: Ctx) -> None:
    write(_stage_copy(ctx) / STAGE / "my-notes.md", "mine\n")


case(T, "a stage folder holding a file training did not write, with --overwrite",
     lambda c: train_args(c.fixture("build"), c.fixture("model"), c.dir / "r", "--overwrite"), 4, r"my-notes",
     setup=_foreign_in_stage, needs=("train",))


def _check_one_log(ctx: Ctx) -> str | None:
    """Each training step's reward record appears once (two runs into one folder both logged every step)."""
    log = ctx.dir / "work" / "r" / STAGE / "reward_log.jsonl"
    if not log.is_file():
        return None
    records = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    steps = Counter(r.get("step") for r in records if any(k.startswith("rewards/") for k in r))
    doubled = [s for s, n in steps.items() if n > 1]
    return f"steps {doubled[:5]} logged twice" if doubled else None


case(T, "a second run into the same folder",
     lambda c: train_args(c.fixture("build"), c.fixture("model"), c.dir / "work" / "r", "max_steps=8"), 4,
     r"another|running|lock",
     first=lambda c: train_args(c.fixture("build"), c.fixture("model"), c.dir / "work" / "r", "max_steps=8"),
     first_env=_hold_owned, first_ready=exists(lambda c: c.dir / "work" / "r" / STAGE / OWNER_LOCK),
     release_first=lambda c: (c.dir / "go").touch(), check=_check_one_log,
     may_change=("work/*", "go"), needs=("build", "model"), timeout=600)
case(T, "Ctrl-C while training",
     lambda c: train_args(c.fixture("build"), c.fixture("model"), c.dir / "work" / "r", "max_steps=50"), 130,
     INTERRUPTED, interrupt=exists(lambda c: c.dir / "work" / "r" / STAGE / "reward_log.jsonl"),
     may_change=("work/*",), needs=("build", "model"), timeout=600)
case(T, "Ctrl-C while training (--stage all)",
     lambda c: [a if a != "1" else "all" for a in train_args(c.fixture("build"), c.fixture("model"), c.dir / "work" / "r",
                                                              "max_steps=50")], 130,
     INTERRUPTED, interrupt=exists(lambda c: c.dir / "work" / "r" / STAGE / "reward_log.jsonl"),
     may_change=("work/*",), needs=("build", "model"), timeout=600)

# --- training.tiny_model (the README's offline model) ----------------------------------------------------------------

TM = "training.tiny_model"
case(TM, "OUT a folder of the user's files", lambda c: [str(user_folder(c))], 4, r"not empty|mine")
case(TM, "OUT a model folder that is not a tiny model", lambda c: [str(c.dir / "m")], 4, r"not empty|model",
     setup=lambda c: write(c.dir / "m" / "config.json", '{"model_type": "llama"}'))
case(TM, "OUT a file", lambda c: [file_in(c, "f", "keep")], 4, r"not a folder")
case(TM, "--dataset missing", lambda c: [str(c.dir / "work" / "m"), "--dataset", str(c.dir / "nope")], 2, r"nope")
case(TM, "a tiny model", lambda c: [str(c.dir / "work" / "m"), "--hidden-size", "16", "--vocab-size", "300"], 0,
     check=lambda c: None if (c.dir / "work" / "m" / "config.json").is_file() else "no config.json", slow=True)

# --- mrtasks.demo -------------------------------------------------------------------------------------------------------

D = "mrtasks.demo"
case(D, "a missing folder", lambda c: [str(c.dir / "nope")], 2, r"nope")
case(D, "a folder that is not a build", lambda c: [str(user_folder(c))], 2, r"not a build")
case(D, "--split unknown", lambda c: [str(c.fixture("build")), "--split", "tets"], 2, r"tets", needs=("build",))
case(D, "a corrupt Parquet file", lambda c: [str(c.dir / "b")], 2, r"parquet|cannot", setup=_corrupt_build,
     needs=("build",))
case(D, "a build", lambda c: [str(c.fixture("build"))], 0,
     check=lambda c: None if "reference" in c.stdout else "no scores", needs=("build",))

# --- training.gpu_smoke -----------------------------------------------------------------------------------------------------

G = "training.gpu_smoke"


def _report(ctx: Ctx) -> str:
    return file_in(ctx, "docs/gpu-smoke.md", "# GPU smoke run\n\nthe report of a real GPU run\n")


case(G, "no CUDA: the tracked report is left as it is", lambda c: ["--report", _report(c)], 0,
     check=lambda c: None if re.search(r"no CUDA", c.stdout + c.stderr, re.I) else "does not say there is no CUDA")
case(G, "--report in a missing folder", lambda c: ["--report", str(c.dir / "no" / "r.md")], 0,
     check=lambda c: None if not (c.dir / "no").exists() else "wrote a report although nothing ran")
case(G, "--cpu-check with --work-dir a file", lambda c: ["--cpu-check", "--work-dir", file_in(c, "f", "keep"),
                                                         "--report", str(c.dir / "r.md")], 4, r"--work-dir")


# --- the quick subset (default pytest run, `make test`) ------------------------------------------------------------------------

# One to three cheap cases per command (no fixture, no model, no interrupt): about a minute in all.
QUICK = {
    "mrtasks.build: --out a folder of the user's files", "mrtasks.build: --source an unknown option (limt=5)",
    "mrtasks.build: --source name= with a |", "mrtasks.build: --source a 0-byte file",
    "mrtasks.rewards.audit: --dataset missing", "mrtasks.rewards.audit: --dataset a folder that is not a build",
    "mrtasks.rewards.bench: -n 0", "mrtasks.rewards.bench: --answers a binary file",
    "mrtasks.rewards.accuracy: an empty file", "mrtasks.rewards.accuracy: equal is the string \"false\"",
    "mrtasks.rewards.accuracy: --checkers empty",
    "mrtasks.curate.annotator_bench: run from another folder", "mrtasks.curate.annotator_bench: --fixture truncated",
    "mrtasks.curate.bench: --corpora missing", "mrtasks.curate.bench: --source a binary file",
    "mrtasks.curate.llm_bench: --json in a missing folder", "mrtasks.curate.llm_bench: --trajectories 0",
    "mrtasks.curate.batch: export --out a file of the user's", "mrtasks.curate.batch: import results that answer nothing",
    "eval.run: --n 0", "eval.compare: a binary summary", "eval.compare: a JSON file that is not a summary",
    "training.run: no --recipe", "training.run: --stage 2 before Stage I",
    "training.tiny_model: OUT a folder of the user's files", "mrtasks.demo: a folder that is not a build",
}


# --- running ----------------------------------------------------------------------------------------------------------------


def select(cases: list[Case], fast: bool, pattern: str | None) -> list[Case]:
    out = [c for c in cases if not (fast and c.slow)]
    if pattern:
        out = [c for c in out if re.search(pattern, c.id, re.I)]
    return out


def matrix_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MRTASKS_BUILD_FAULT", "HF_TOKEN", "OPENAI"))}
    env.update(OFFLINE)
    env["PYTHONPATH"] = str(REPO_ROOT)
    env["HF_HOME"] = str(root / "hf-home")
    env["XDG_CACHE_HOME"] = str(root / "xdg-cache")
    env["CUDA_VISIBLE_DEVICES"] = env.get("CUDA_VISIBLE_DEVICES", "")  # the matrix is a CPU run
    return env


def run_matrix(cases: list[Case], jobs: int = 2, verbose: bool = False, root: Path | None = None) -> list[Result]:
    if threading.current_thread() is threading.main_thread():
        # A shell starts background jobs with SIGINT ignored, and children inherit that: the Ctrl-C
        # cases would test nothing. A handler (unlike SIG_IGN) is reset to the default on exec.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    own = root is None
    root = Path(tempfile.mkdtemp(prefix="safety-matrix-")) if own else root
    try:
        env = matrix_env(root)
        fx = Fixtures(root / "fixtures", env)
        (root / "fixtures").mkdir(parents=True, exist_ok=True)
        cases_root = root / "cases"
        cases_root.mkdir(exist_ok=True)
        results: list[Result] = []
        serial = [c for c in cases if c.first or c.interrupt]  # timing-sensitive: run alone
        parallel = [c for c in cases if c not in serial]
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for r in pool.map(lambda c: run_case(c, fx, env, cases_root), parallel):
                results.append(r)
                _progress(r, verbose)
        for c in serial:
            r = run_case(c, fx, env, cases_root)
            results.append(r)
            _progress(r, verbose)
        order = {c.id: i for i, c in enumerate(cases)}
        return sorted(results, key=lambda r: order[r.case])
    finally:
        if own:
            shutil.rmtree(root, ignore_errors=True)


def _progress(r: Result, verbose: bool) -> None:
    mark = "ok " if r.verdict == "good" else r.verdict.upper()
    line = f"{mark:<13} {r.seconds:6.1f}s  {r.case}"
    if verbose and r.verdict != "good":
        line += f"\n              exit {r.code}: {r.detail}"
    print(line, flush=True)


def counts(results: list[Result]) -> dict[str, int]:
    c = Counter(r.verdict for r in results)
    return {v: c.get(v, 0) for v in VERDICTS}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.safety_matrix", description=__doc__.splitlines()[0],
                                epilog="exit codes: 0 every case good; 1 some case is not; 2 bad arguments")
    p.add_argument("--fast", action="store_true", help="leave out the cases that need a model (eval, training)")
    p.add_argument("--quick", action="store_true", help="only the quick subset that `make test` runs")
    p.add_argument("-k", dest="pattern", help="only cases whose `command: name` matches this regular expression")
    p.add_argument("-j", "--jobs", type=int, default=2, help="cases run at once (default 2)")
    p.add_argument("-v", "--verbose", action="store_true", help="print why each case is not good")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument("--json", type=Path, help="also write every result as JSON here")
    args = p.parse_args(argv)
    cases = select([c for c in CASES if c.id in QUICK] if args.quick else CASES, args.fast, args.pattern)
    if args.list:
        for c in cases:
            print(f"{c.id}  -> exit {c.code}" + (f" /{c.words}/" if c.words else "") + ("  [slow]" if c.slow else ""))
        print(f"{len(cases)} cases")
        return 0
    if not cases:
        print("error: no case matches", file=sys.stderr)
        return 2
    start = time.monotonic()
    results = run_matrix(cases, args.jobs, args.verbose)
    totals = counts(results)
    by_command: dict[str, Counter] = {}
    for r, c in zip(results, cases):
        by_command.setdefault(c.command, Counter())[r.verdict] += 1
    print()
    print(f"{'command':<32}" + "".join(f"{v:>14}" for v in VERDICTS))
    for command, cnt in by_command.items():
        print(f"{command:<32}" + "".join(f"{cnt.get(v, 0):>14}" for v in VERDICTS))
    print(f"{'total (' + str(len(results)) + ' cases)':<32}" + "".join(f"{totals[v]:>14}" for v in VERDICTS))
    print(f"{time.monotonic() - start:.0f} s")
    if args.json:
        args.json.write_text(json.dumps({"counts": totals, "results": [r.__dict__ for r in results]}, indent=2) + "\n")
    return 0 if totals["good"] == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
