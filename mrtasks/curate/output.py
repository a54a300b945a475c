"""The build's output folder: locked, checked before any work, replaced atomically on success.

`OutputFolder(out)` is what `mrtasks.build` writes through:

    with OutputFolder(out) as folder:      # lock, refuse a foreign folder, check writability
        ...run the pipeline, write into folder.stage...
        folder.commit()                    # swap the staged build in with renames

- **Marker.** A build folder's `build_stats.json` carries `"mrtasks_build": {"format": 1, "files": [...]}`,
  the files that build wrote. `--out` on a non-empty folder without it (a wrong path, `.`, someone's
  data) is refused, and so is a build folder holding files the build did not write; nothing is read
  or written beyond that check.
- **Lock.** `.<name>.lock` beside the folder, held with `flock` for the whole build: a second build
  into the same folder is refused at once with the pid of the first. The kernel drops the lock when
  its process dies, so a killed build never leaves a stale lock.
- **Atomic swap.** The build is written into `.<name>.tmp-*` beside the folder (same filesystem)
  and swapped in only when complete: one `renameat2(RENAME_EXCHANGE)` on Linux, else two renames
  (`out -> .<name>.old-*`, `tmp -> out`). A kill at any point leaves either the previous build or the
  new one; the next build under the lock removes leftover `.tmp-*`/`.old-*` folders and, if a kill
  fell between the two fallback renames, first puts the previous build back.

`MRTASKS_BUILD_FAULT=<point>[:sleep=<s>|:wait=<file>][,...]` (tests only) kills the process with
SIGKILL, or sleeps, or waits for a file to exist, at `staged` (lock held, nothing built), `pipeline_done`, `config_written` (first config in
the stage), `staged_complete` (card and stats written, before the swap), `moved_aside` (fallback
swap: between its two renames) and `swapped` (before the old build is removed); the item
`no_exchange` forces the two-rename fallback.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import json
import logging
import os
import shutil
import signal
import tempfile
import time
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
    """Another build holds the folder's lock."""


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
        self._lock_fd: int | None = None
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
        import fcntl

        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise OutputError(f"--out {self.out}: cannot write in {self.parent}: {e.strerror or e}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise OutputLocked(
                f"another build (pid {holder}) is writing into {self.out}; wait for it to finish or choose another --out"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock; the file stays (removing it would race)
            self._lock_fd = None

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
