"""Output folders that never lose a user's files: one guard for every command that writes a folder.

Two kinds of writers share the checks, the marker idea and the lock:

- **`OutputFolder(out)`**, the build's folder (`mrtasks.build`): checked, locked, written into a
  staging folder beside it and swapped in atomically when complete.

      with OutputFolder(out) as folder:      # lock, refuse a foreign folder, check writability
          ...run the pipeline, write into folder.stage...
          folder.commit()                    # swap the staged build in with renames

- **`OwnedFolder(path, OWNER)`**, a folder written in place over a long run (`eval.run`'s output,
  a `training.run` stage, `training.tiny_model`): the command writes only into a new or empty
  folder, or one carrying its own marker (`.mrtasks-owner.json`, naming the command), and never
  over a file it did not write; `remove_own()` (`--overwrite`) deletes only the files the command
  writes. A model folder, a dataset build, another command's output or a folder of the user's
  files is refused with one line that says what it is.

Shared rules:

- **Marker.** A build folder's `build_stats.json` carries `"mrtasks_build": {"format": 1, "files": [...]}`,
  the files that build wrote; an owned folder carries `.mrtasks-owner.json`. A non-empty folder
  without the right marker (a wrong path, `.`, someone's data) is refused, and so is a marked folder
  holding files its command did not write; nothing is read or written beyond that check.
- **Lock.** A lock file held with `flock` for the whole run (`.<name>.lock` beside a build folder,
  `.mrtasks.lock` inside an owned folder): a second run into the same folder is refused at once with
  the pid of the first. The kernel drops the lock when its process dies, and the file is removed when
  the run ends (a killed run's file is reused by the next one: it holds no lock).
- **Permissions.** Folders are created with the user's umask (a staged build is re-moded after
  `mkdtemp`, which makes 0700 folders).
- **Atomic swap** (builds). The build is written into `.<name>.tmp-*` beside the folder (same
  filesystem) and swapped in only when complete: one `renameat2(RENAME_EXCHANGE)` on Linux, else two
  renames (`out -> .<name>.old-*`, `tmp -> out`). A kill at any point leaves either the previous build
  or the new one; the next build under the lock removes leftover `.tmp-*`/`.old-*` folders and, if a
  kill fell between the two fallback renames, first puts the previous build back.

`MRTASKS_BUILD_FAULT=<point>[:sleep=<s>|:wait=<file>][,...]` (tests only) kills the process with
SIGKILL, or sleeps, or waits for a file to exist, at `staged` (lock held, nothing built), `pipeline_done`, `config_written` (first config in
the stage), `staged_complete` (card and stats written, before the swap), `moved_aside` (fallback
swap: between its two renames), `swapped` (before the old build is removed) and `owned` (an owned
folder's lock held); the item `no_exchange` forces the two-rename fallback.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fnmatch
import json
import logging
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

MARKER = "mrtasks_build"
MARKER_FORMAT = 1
STATS_FILE = "build_stats.json"
FAULT_ENV = "MRTASKS_BUILD_FAULT"


class OutputError(Exception):
    """`--out` cannot be used (foreign folder, not writable, locked); the message is one line."""


class OutputLocked(OutputError):
    """Another run holds the folder's lock."""


def current_umask() -> int:
    """The process umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class FileLock:
    """An exclusive, non-blocking `flock` on `path` that records this pid; `release()` removes the file.

    The file is removed while the lock is still held, and a new holder checks, once it has the
    lock, that the file it locked is still the one at `path` (else it retries on the new one): a
    run that opened the old file just before it went away never shares a lock with the next run.
    """

    def __init__(self, path: Path, busy: Callable[[str], str], where: str):
        self.path = path
        self.busy = busy
        self.where = where
        self.fd: int | None = None

    def acquire(self) -> None:
        import fcntl

        for _ in range(20):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            except OSError as e:
                raise OutputError(f"{self.where}: cannot write in {self.path.parent}: {e.strerror or e}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
                os.close(fd)
                raise OutputLocked(self.busy(holder)) from None
            try:
                st, now = os.fstat(fd), os.stat(self.path)
                same = (st.st_dev, st.st_ino) == (now.st_dev, now.st_ino)
            except FileNotFoundError:
                same = False
            if same:
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
                self.fd = fd
                return
            os.close(fd)  # the previous holder removed it as we opened it: take the new file
        raise OutputError(f"{self.where}: could not take the lock {self.path}")

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            os.unlink(self.path)
        except OSError:
            pass
        os.close(self.fd)  # releases the flock
        self.fd = None


def fault_point(point: str) -> None:
    """Test hook: die (SIGKILL) or sleep here when `MRTASKS_BUILD_FAULT` names this point."""
    for item in os.environ.get(FAULT_ENV, "").split(","):
        name, _, action = item.strip().partition(":")
        if name != point:
            continue
        if action.startswith("sleep="):
            time.sleep(float(action.split("=", 1)[1]))
            continue
        if action.startswith("wait="):  # until that file exists (at most 120 s)
            deadline = time.monotonic() + 120
            while not os.path.exists(action.split("=", 1)[1]) and time.monotonic() < deadline:
                time.sleep(0.05)
            continue
        logger.warning("fault injection: killing the build at %s", point)
        os.kill(os.getpid(), signal.SIGKILL)


def _fault_forces_fallback() -> bool:
    return "no_exchange" in {i.strip() for i in os.environ.get(FAULT_ENV, "").split(",")}


def read_marker(folder: Path) -> dict[str, Any] | None:
    """The marker of a folder written by `mrtasks.build`, or None.

    A build from before the marker (its stats have `fingerprint` and `counts`, and it holds nothing
    but `README.md`, `build_stats.json` and `data/<config>/*.parquet`) counts as marked."""
    try:
        stats = json.loads((folder / STATS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(stats, dict):
        return None
    marker = stats.get(MARKER)
    if isinstance(marker, dict) and isinstance(marker.get("files"), list):
        return marker
    if "fingerprint" in stats and "counts" in stats:
        files = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir()}
        legacy = {
            f for f in files
            if f in ("README.md", STATS_FILE) or (f.startswith("data/") and f.endswith(".parquet") and f.count("/") == 2)
        }
        if files == legacy:
            return {"format": 0, "files": sorted(files)}
    return None


def make_marker(root: Path, files: list[Path]) -> dict[str, Any]:
    """The marker for a build whose files (besides build_stats.json itself) are `files`."""
    names = sorted({f.relative_to(root).as_posix() for f in files} | {STATS_FILE})
    return {"format": MARKER_FORMAT, "files": names}


def _listing(folder: Path) -> set[str]:
    """Every file and folder under `folder`, as relative POSIX paths."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")}


def _parents(paths: set[str]) -> set[str]:
    out = set()
    for p in paths:
        parts = p.split("/")
        out |= {"/".join(parts[:k]) for k in range(1, len(parts))}
    return out


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError, TypeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


class OutputFolder:
    """Lock, check and stage one build of `out`; see the module docstring."""

    def __init__(self, out: Path) -> None:
        self.out = Path(os.path.abspath(out))
        self.parent = self.out.parent
        self.lock_path = self.parent / f".{self.out.name}.lock"
        self.stage: Path = self.out  # set by __enter__
        self._held: FileLock | None = None
        self._committed = False

    # --- lock -----------------------------------------------------------------------------

    def __enter__(self) -> OutputFolder:
        if not self.out.name:
            raise OutputError(f"--out {self.out} is a filesystem root; name a folder")
        cwd = Path(os.getcwd())
        if self.out == cwd or self.out in cwd.parents:
            raise OutputError(f"--out {self.out} is the current folder or holds it; name a folder beside or below it")
        if self.parent.exists() and not self.parent.is_dir():
            raise OutputError(f"--out {self.out}: {self.parent} is not a folder")
        self._check()  # refuse a foreign folder before creating anything, not even the lock file
        try:
            self.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OutputError(f"--out {self.out}: cannot create {self.parent}: {e.strerror or e}") from None
        self._lock()
        try:
            self._recover()
            self._check()
            try:
                self.stage = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.tmp-", dir=self.parent))
                os.chmod(self.stage, 0o777 & ~current_umask())  # mkdtemp makes 0700; the build keeps the umask
            except OSError as e:
                raise OutputError(f"--out {self.out}: cannot write in {self.parent}: {e.strerror or e}") from None
        except BaseException:
            self._unlock()
            raise
        fault_point("staged")
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if not self._committed and self.stage != self.out:
                shutil.rmtree(self.stage, ignore_errors=True)
        finally:
            self._unlock()

    def _lock(self) -> None:
        def busy(pid: str) -> str:
            return f"another build (pid {pid}) is writing into {self.out}; wait for it to finish or choose another --out"

        lock = FileLock(self.lock_path, busy, f"--out {self.out}")
        lock.acquire()
        self._held = lock

    def _unlock(self) -> None:
        if self._held is not None:
            self._held.release()
            self._held = None

    # --- checks ---------------------------------------------------------------------------

    def _leftovers(self, kind: str) -> list[Path]:
        return sorted(p for p in self.parent.glob(f".{self.out.name}.{kind}-*") if p.is_dir())

    def _recover(self) -> None:
        """Under the lock: finish what a killed build left (see the module docstring)."""
        old = [p for p in self._leftovers("old") if read_marker(p) is not None]
        if not self.out.exists() and old:
            os.rename(old[-1], self.out)
            logger.warning("restored the previous build of %s (a build was killed while swapping)", self.out)
        for leftover in self._leftovers("tmp") + self._leftovers("old"):
            logger.info("removing %s, left by a build that did not finish", leftover.name)
            shutil.rmtree(leftover, ignore_errors=True)

    def _check(self) -> None:
        out = self.out
        if out.is_symlink():
            raise OutputError(f"--out {out} is a symbolic link; pass the folder it points to")
        if out.exists() and not out.is_dir():
            raise OutputError(f"--out {out} exists and is not a folder; refusing to replace it")
        if not out.exists() or not any(out.iterdir()):
            return
        marker = read_marker(out)
        if marker is None:
            raise OutputError(
                f"--out {out} is not empty and holds no previous build (no {STATS_FILE} marker); "
                "refusing to replace it: choose a new or empty folder"
            )
        written = set(marker["files"])
        foreign = sorted(_listing(out) - written - _parents(written))
        if foreign:
            shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
            raise OutputError(
                f"--out {out} holds files the previous build did not write ({shown}); "
                "move them away or choose another --out"
            )
        if not os.access(out, os.W_OK | os.X_OK):
            raise OutputError(f"--out {out} is not writable")

    # --- swap -----------------------------------------------------------------------------

    def commit(self) -> None:
        """Swap the complete staged build in for `out` (see the module docstring)."""
        fault_point("staged_complete")
        out, stage = self.out, self.stage
        if out.is_dir() and not any(out.iterdir()):
            out.rmdir()
        if not out.exists():
            os.rename(stage, out)
            self._committed = True
            return
        if not _fault_forces_fallback() and _exchange(stage, out):
            self._committed = True  # `stage` now holds the previous build
            fault_point("swapped")
            shutil.rmtree(stage, ignore_errors=True)
            return
        old = self.parent / f".{out.name}.old-{os.getpid()}-{time.time_ns()}"
        os.rename(out, old)  # still a marked build: _recover puts it back if a kill comes now
        fault_point("moved_aside")
        os.rename(stage, out)
        self._committed = True
        fault_point("swapped")
        shutil.rmtree(old, ignore_errors=True)


# --- folders written in place (eval.run, training.run stages, training.tiny_model) -------------------

OWNER_FILE = ".mrtasks-owner.json"
OWNER_LOCK = ".mrtasks.lock"
MODEL_FILES = ("*.safetensors", "*.safetensors.index.json", "pytorch_model*.bin", "*.gguf")


@dataclass(frozen=True)
class Owner:
    """A command that writes a folder in place, and the files it may write there.

    `files` are patterns of relative POSIX paths: `name` or `*.ext` for a file at the top of the
    folder, `dir/` (or `checkpoint-*/`) for a folder and everything under it. `legacy` recognises a
    folder this command wrote before it left a marker (it is adopted when it holds nothing else).
    """

    command: str
    files: tuple[str, ...]
    option: str = "--output-dir"
    legacy: Callable[[Path], bool] | None = None

    def owns(self, rel: str) -> bool:
        if rel in (OWNER_FILE, OWNER_LOCK):
            return True
        head, sep, _ = rel.partition("/")
        for pattern in self.files:
            if pattern.endswith("/"):
                if fnmatch.fnmatchcase(head, pattern[:-1]):
                    return True
            elif not sep and fnmatch.fnmatchcase(rel, pattern):
                return True
        return False


def read_owner(folder: Path) -> str | None:
    """The command named by an owned folder's marker, or None."""
    try:
        data = json.loads((folder / OWNER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    command = data.get("command") if isinstance(data, dict) else None
    return command if isinstance(command, str) else None


def describe_folder(folder: Path) -> str | None:
    """What a folder is, when it is something a command must never write into: a dataset build,
    another command's output, a model folder; None otherwise."""
    if read_marker(folder) is not None:
        return "a dataset build (written by mrtasks.build)"
    owner = read_owner(folder)
    if owner:
        return f"the output of {owner}"
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = None
    if isinstance(config, dict) and ("model_type" in config or "architectures" in config):
        return "a model folder (its config.json names a model)"
    if any(any(folder.glob(p)) for p in MODEL_FILES):
        return "a model folder (it holds model weights)"
    return None


def _files(folder: Path) -> list[str]:
    """Every file under `folder` (not folders), as sorted relative POSIX paths."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir())


def _shown(names: list[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


class OwnedFolder:
    """Check, lock and mark a folder that `owner.command` writes in place; see the module docstring.

        with OwnedFolder(out, EVAL_OWNER) as folder:   # refuses a foreign folder, locks, marks
            if overwrite:
                folder.remove_own()
            ...write into out...

    `lock=False` checks and marks without locking (the non-main processes of a distributed run,
    whose main process holds the lock). Every refusal is an `OutputError` with a one-line message.
    """

    def __init__(self, path: str | Path, owner: Owner, lock: bool = True,
                 discard_on_error: Callable[[Path], bool] | None = None):
        self.path = Path(os.path.abspath(path))
        self.owner = owner
        self.lock = lock
        self.discard_on_error = discard_on_error
        """When the run fails in a folder it created, and this says the folder holds nothing worth
        keeping (no sample, no checkpoint), the folder is removed again: a failed run leaves no litter."""
        self._held: FileLock | None = None
        self._created = False
        self._first_new = self.path

    @property
    def _where(self) -> str:
        return f"{self.owner.option} {self.path}"

    def check(self) -> None:
        """Refuse a folder this command must not write into (read-only; raises OutputError)."""
        p, command, where = self.path, self.owner.command, self._where
        cwd = Path(os.getcwd())
        if p == cwd or p in cwd.parents:
            raise OutputError(f"{where} is the current folder or holds it; name a new folder beside or below it")
        if p.exists() and not p.is_dir():
            raise OutputError(f"{where} exists and is not a folder; refusing to replace it")
        ancestor = p.parent
        while not ancestor.exists() and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            raise OutputError(f"{where}: {ancestor} is not a folder")
        if not p.exists():
            return
        files = [f for f in _files(p) if f != OWNER_LOCK]
        if not files:
            return
        marked = read_owner(p)
        adopt = marked is None and self.owner.legacy is not None and self.owner.legacy(p)
        if marked != command and not adopt:
            what = describe_folder(p)
            if what:
                raise OutputError(
                    f"{where} is {what}; {command} writes only into a new or empty folder or its own output: "
                    f"choose another {self.owner.option}"
                )
            raise OutputError(
                f"{where} is not empty and was not written by {command} (it holds {_shown(files)}); refusing to "
                f"write into it: choose a new or empty folder"
            )
        foreign = [f for f in files if not self.owner.owns(f)]
        if foreign:
            raise OutputError(
                f"{where} holds files {command} did not write ({_shown(foreign)}); move them away or choose "
                f"another {self.owner.option}"
            )
        if not os.access(p, os.W_OK | os.X_OK):
            raise OutputError(f"{where} is not writable")

    def __enter__(self) -> OwnedFolder:
        self.check()
        self._created = not self.path.exists()
        self._first_new = self.path  # the highest folder this run creates (parents included)
        while not self._first_new.parent.exists() and self._first_new.parent != self._first_new.parent.parent:
            self._first_new = self._first_new.parent
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OutputError(f"{self._where}: cannot create it: {e.strerror or e}") from None
        if self.lock:
            command = self.owner.command

            def busy(pid: str) -> str:
                return (f"another {command} run (pid {pid}) is writing into {self.path}; wait for it to finish or "
                        f"choose another {self.owner.option}")

            self._held = FileLock(self.path / OWNER_LOCK, busy, self._where)
            self._held.acquire()
        try:
            self.check()  # again, now that no other run can be changing it
            if read_owner(self.path) != self.owner.command:
                (self.path / OWNER_FILE).write_text(
                    json.dumps({"command": self.owner.command, "format": 1}) + "\n", encoding="utf-8"
                )
        except BaseException:
            self.release()
            raise
        fault_point("owned")
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        discard = (exc_type is not None and self._created and self.discard_on_error is not None
                   and self.discard_on_error(self.path))
        if discard:
            self.remove_own()
        self.release()
        if discard:
            (self.path / OWNER_FILE).unlink(missing_ok=True)
            folder = self.path
            while True:  # the folder, then the parents this run created, while they are empty
                try:
                    folder.rmdir()
                except OSError:
                    break
                if folder == self._first_new:
                    break
                folder = folder.parent

    def release(self) -> None:
        if self._held is not None:
            self._held.release()
            self._held = None

    def remove_own(self) -> list[str]:
        """Delete what this command wrote here (`--overwrite`), never anything else; return the names."""
        removed = []
        for entry in sorted(self.path.iterdir()):
            rel = entry.name
            if rel in (OWNER_FILE, OWNER_LOCK):
                continue
            if entry.is_dir() and not entry.is_symlink():
                if self.owner.owns(rel + "/x") and all(self.owner.owns(f"{rel}/{f}") for f in _files(entry)):
                    shutil.rmtree(entry)
                    removed.append(rel + "/")
            elif self.owner.owns(rel):
                entry.unlink()
                removed.append(rel)
        if removed:
            logger.info("removed %s from %s", _shown(removed), self.path)
        return removed


def check_output_file(option: str, path: str | Path, command: str,
                      ours: Callable[[Path], bool] | None = None) -> None:
    """Refuse a file path a command must not write, before any work (an `OutputError` line): a
    folder, a missing or read-only folder, a path inside a dataset build, another command's output
    or a model folder, or (with `ours`, which recognises the command's own files) an existing file
    the command did not write."""
    p = Path(os.path.abspath(path))
    where = f"{option} {path}"
    if p.is_dir():
        raise OutputError(f"{where} is a folder; name a file")
    if not p.parent.is_dir():
        raise OutputError(f"{where}: the folder {p.parent} does not exist")
    for folder in (p.parent, *p.parent.parents):
        what = describe_folder(folder)
        if what:
            raise OutputError(f"{where} lies inside {folder}, {what}; write it elsewhere")
    if p.exists() and ours is not None and not ours(p):
        raise OutputError(f"{where} exists and was not written by {command}; move it away or choose another path")
    if not os.access(p.parent, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise OutputError(f"{where} is not writable")


def write_output_file(option: str, path: str | Path, text: str) -> None:
    """Write a checked output file whole or not at all (written beside it, then renamed over it: an
    interrupted write never leaves half a file for the next run's `ours` check to refuse); a failure
    is one `OutputError` line."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
    except OSError as e:
        raise OutputError(f"{option} {path}: cannot write: {e.strerror or e}") from None
    finally:
        tmp.unlink(missing_ok=True)
