"""The guard of folders written in place (`mrtasks.output.OwnedFolder`): eval.run, training.run, tiny_model."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from mrtasks.output import OWNER_FILE, OWNER_LOCK, OutputError, OutputLocked, OwnedFolder, Owner, read_owner
from tests.conftest import REPO_ROOT

TOOL = Owner("tool", ("result.json", "table.md", "ckpt-*/"), "--out")


def snapshot(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_new_folder_is_claimed_marked_and_the_lock_goes_with_the_run(tmp_path):
    out = tmp_path / "a" / "out"
    with OwnedFolder(out, TOOL):
        assert (out / OWNER_LOCK).read_text().strip() == str(os.getpid())
        (out / "result.json").write_text("{}")
    assert read_owner(out) == "tool"
    assert sorted(p.name for p in out.iterdir()) == [OWNER_FILE, "result.json"]
    with OwnedFolder(out, TOOL):  # its own folder again
        pass


@pytest.mark.parametrize(("files", "words"), [
    ({"config.json": json.dumps({"model_type": "qwen2"}), "model.safetensors": "w"}, "is a model folder"),
    ({"model-00001-of-00002.safetensors": "w"}, "is a model folder (it holds model weights)"),
    ({"build_stats.json": json.dumps({"mrtasks_build": {"format": 1, "files": ["build_stats.json"]}})},
     "is a dataset build"),
    ({OWNER_FILE: json.dumps({"command": "eval.run"}), "summary.json": "{}"}, "is the output of eval.run"),
    ({"table.md": "my table", "notes.md": "mine"}, "is not empty and was not written by tool (it holds notes.md, table.md)"),
])
def test_a_folder_it_did_not_write_is_refused_and_left_as_it_was(tmp_path, files, words):
    out = tmp_path / "out"
    out.mkdir()
    for name, text in files.items():
        (out / name).write_text(text)
    before = snapshot(out)
    with pytest.raises(OutputError) as err:
        with OwnedFolder(out, TOOL):
            pytest.fail("entered")
    assert words in str(err.value) and "\n" not in str(err.value)
    assert snapshot(out) == before and not (out / OWNER_LOCK).exists()


def test_its_own_folder_with_a_foreign_file_is_refused_and_overwrite_removes_only_its_own(tmp_path):
    out = tmp_path / "out"
    with OwnedFolder(out, TOOL):
        (out / "result.json").write_text("{}")
        (out / "ckpt-1").mkdir()
        (out / "ckpt-1" / "w.bin").write_text("w")
    (out / "notes.md").write_text("mine")
    with pytest.raises(OutputError, match=r"holds files tool did not write \(notes.md\)"):
        OwnedFolder(out, TOOL).__enter__()
    (out / "notes.md").unlink()
    with OwnedFolder(out, TOOL) as folder:
        assert folder.remove_own() == ["ckpt-1/", "result.json"]
    assert sorted(p.name for p in out.iterdir()) == [OWNER_FILE]


def test_a_second_run_is_refused_at_once_with_the_first_ones_pid(tmp_path):
    out = tmp_path / "out"
    with OwnedFolder(out, TOOL):
        with pytest.raises(OutputLocked, match=f"another tool run \\(pid {os.getpid()}\\) is writing into {out}"):
            OwnedFolder(out, TOOL).__enter__()
    code = ("import sys; from mrtasks.output import OwnedFolder, Owner\n"
            f"OwnedFolder({str(out)!r}, Owner('tool', ('result.json',))).__enter__(); sys.exit(0)")
    # a process that died holding the lock left the file but no lock: the next run takes it
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    with OwnedFolder(out, TOOL):
        pass
    assert not (out / OWNER_LOCK).exists()


def test_a_failed_run_removes_the_folder_it_created_but_never_one_it_found(tmp_path):
    out = tmp_path / "new"
    with pytest.raises(RuntimeError):
        with OwnedFolder(out, TOOL, discard_on_error=lambda p: True):
            (out / "result.json").write_text("{}")
            raise RuntimeError("model failed to load")
    assert not out.exists()
    deep = tmp_path / "runs" / "a" / "stage"
    with pytest.raises(RuntimeError):
        with OwnedFolder(deep, TOOL, discard_on_error=lambda p: True):
            raise RuntimeError("dataset missing")
    assert not (tmp_path / "runs").exists(), "the parents it created go too"
    found = tmp_path / "found"
    found.mkdir()
    with pytest.raises(RuntimeError):
        with OwnedFolder(found, TOOL, discard_on_error=lambda p: True):
            raise RuntimeError("x")
    assert found.is_dir()


def test_a_legacy_folder_is_adopted_only_when_it_holds_nothing_else(tmp_path):
    legacy = Owner("tool", ("result.json", "table.md"), "--out", lambda p: (p / "result.json").is_file())
    out = tmp_path / "out"
    out.mkdir()
    (out / "result.json").write_text("{}")
    with OwnedFolder(out, legacy):
        pass
    assert read_owner(out) == "tool"
    other = tmp_path / "other"
    other.mkdir()
    (other / "result.json").write_text("{}")
    (other / "mine.txt").write_text("x")
    with pytest.raises(OutputError, match="did not write"):
        OwnedFolder(other, legacy).__enter__()


def test_paths_that_are_not_folders_are_refused(tmp_path):
    f = tmp_path / "f"
    f.write_text("keep")
    for path, words in ((f, "exists and is not a folder"), (f / "sub", "is not a folder")):
        with pytest.raises(OutputError, match=words):
            OwnedFolder(path, TOOL).__enter__()
    assert f.read_text() == "keep"


def test_run_command_turns_known_errors_and_interrupts_into_one_line(capsys):
    """A command's body ends with its documented exit code and one stderr line, never a traceback."""
    from mrtasks.logs import run_command

    def fails(exc: BaseException):
        def body() -> int:
            raise exc
        return body

    assert run_command(lambda: 0, {OutputError: 4}) == 0
    assert run_command(fails(OutputError("OUT is a dataset build\nsecond line")), {OutputError: 4, ValueError: 2}) == 4
    assert capsys.readouterr().err == "error: OUT is a dataset build\n"
    assert run_command(fails(KeyboardInterrupt()), {}) == 130
    assert capsys.readouterr().err == "error: interrupted\n"
    assert run_command(fails(ValueError("")), {OSError: 2, ValueError: 3}) == 3
    assert capsys.readouterr().err == "error: ValueError\n"
    # the first listed class that matches decides: FileNotFoundError is an OSError too
    assert run_command(fails(FileNotFoundError("x")), {FileNotFoundError: 2, OSError: 4}) == 2
    assert run_command(fails(FileNotFoundError("x")), {OSError: 4, FileNotFoundError: 2}) == 4
    with pytest.raises(KeyError):  # an error nobody listed is a bug: its traceback shows
        run_command(fails(KeyError("x")), {OutputError: 4})


def test_an_output_file_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    """A write cut off before its rename leaves the previous file as it was and no temporary file."""
    from mrtasks.output import write_output_file

    out = tmp_path / "figures.json"
    write_output_file("--json", out, "first\n")
    assert out.read_text() == "first\n"

    def cut_off(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", cut_off)
    with pytest.raises(OutputError, match="--json .*cannot write: No space left on device"):
        write_output_file("--json", out, "second\n")
    assert out.read_text() == "first\n" and sorted(p.name for p in tmp_path.iterdir()) == ["figures.json"]
