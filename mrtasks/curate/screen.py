"""`python -m mrtasks.curate.screen OUT`: print a sample of a build's masks in context, to read by hand.

The bookkeeping screen of the curation issues: Masked-Then-Fill rows of a build (every split), sorted
by id, `random.Random(seed).sample(rows, n)`; each mask is shown inside its sentence with the role the
annotator's context reader gives it (`derived`, `claim`, `assumed`, or `-`). `--cues` keeps only the
masks worth a first look: a definition, case or quantifier word just before them, or alignment marks,
`\\text`, an escaped dollar or a `!` inside. `--save-ids` / `--ids` re-screen the same rows after a
change, so a before/after count compares like with like.

    python -m mrtasks.curate.screen OUT --rows 200 --seed 20 --save-ids ids.json > before.txt
    python -m mrtasks.curate.screen OUT2 --ids ids.json > after.txt

`--labels` re-measures a screen whose masks were read once (JSONL rows `{"id", "start", "end", "kind"}`, kind 0
a real formula, 1-6 the issue's bookkeeping kinds, 7 other trivial masks) on a new build without reading it again:
how many labelled bookkeeping masks the build still masks, how many real ones it lost, and how many of its masks
are new since the labels (those need a reading).

    python -m mrtasks.curate.screen OUT2 --labels tests/data/bookkeeping_screens/external_e.labels.jsonl
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mrtasks.curate.heuristic.context import bookkeeping_cue, role
from mrtasks.curate.quality import mask_spans
from mrtasks.logs import first_line, run_command
from mrtasks.output import OutputError, check_output_file, write_output_file
from mrtasks.rewards import rows
from mrtasks.tasks.masked_then_fill import MASKED_THEN_FILL

logger = logging.getLogger(__name__)

EXIT_OK, EXIT_USAGE, EXIT_OUTPUT = 0, 2, 4


class ScreenInputError(Exception):
    """The --ids file or the build's rows cannot be read (exit 2)."""



def load_rows(out: Path) -> list[dict[str, Any]]:
    """Every Masked-Then-Fill row of a build folder, all splits, sorted by id."""
    return sorted(rows.load_rows(out, MASKED_THEN_FILL), key=lambda r: r["id"])


def sample_rows(rows: list[dict[str, Any]], n: int, seed: int, ids: list[str] | None = None) -> list[dict[str, Any]]:
    """The rows named by `ids` (in that order, missing ones skipped), else `Random(seed).sample(rows, n)`."""
    if ids is not None:
        by_id = {r["id"]: r for r in rows}
        return [by_id[i] for i in ids if i in by_id]
    return random.Random(seed).sample(rows, min(n, len(rows)))


def screen_lines(rows: list[dict[str, Any]], context: int = 45, cues: bool = False) -> Iterator[str]:
    """`=== [k] id masks=N`, then `  #n role …before⟦mask⟧after…` for each mask (newlines shown as ⏎)."""
    n = 0
    for k, row in enumerate(rows):
        solution = row["solution"]
        yield f"=== [{k}] {row['id']}  masks={len(row['masks'])}"
        for start, end in mask_spans(row):
            n += 1
            if cues and not bookkeeping_cue(solution, start, end):
                continue
            what = role(solution, start, end, row.get("problem", "")) or "-"
            before = solution[max(0, start - context) : start].replace("\n", "⏎")
            after = solution[end : end + context].replace("\n", "⏎")
            yield f"  #{n} {what} …{before}⟦{solution[start:end]}⟧{after}…"


BOOKKEEPING_KINDS = range(1, 7)
"""The issue's kinds: index ranges, case labels and hypotheses, definitions, tables, alignment residue, garbled."""


def read_labels(path: Path) -> dict[str, dict[tuple[int, int], int]]:
    """A labels file as {row id: {(start, end): kind}}; a malformed line is a ScreenInputError naming it."""
    labels: dict[str, dict[tuple[int, int], int]] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise ScreenInputError(f"--labels {path}: {first_line(e)}") from e
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            span, kind = (row["start"], row["end"]), row["kind"]
            if not isinstance(row["id"], str) or not all(type(v) is int for v in (*span, kind)) or not 0 <= kind <= 7 \
                    or not 0 <= span[0] < span[1]:
                raise ValueError("needs a string id, whole numbers 0 <= start < end and a kind from 0 to 7")
        except (ValueError, KeyError, TypeError) as e:
            raise ScreenInputError(f"--labels {path}: line {n}: {first_line(e)}") from e
        labels.setdefault(row["id"], {})[span] = kind
    if not labels:
        raise ScreenInputError(f"--labels {path}: no labelled masks")
    return labels


def label_figures(rows: list[dict[str, Any]], labels: dict[str, dict[tuple[int, int], int]]) -> dict[str, int]:
    """The labelled masks against a build's masks: what it still masks, what it no longer masks (in rows it keeps;
    a row the build dropped loses all its masks) and what it masks that nobody labelled."""
    by_id = {r["id"]: r for r in rows}
    f = dict.fromkeys(
        ("rows", "rows_gone", "masks", "bookkeeping", "bookkeeping_masked", "bookkeeping_unmasked_in_kept_rows",
         "real", "real_unmasked_in_kept_rows", "trivial", "trivial_masked", "unlabelled_masks"), 0
    )
    for rid, spans in labels.items():
        f["rows"] += 1
        row = by_id.get(rid)
        masked = set(mask_spans(row)) if row is not None else set()
        f["rows_gone"] += row is None
        f["unlabelled_masks"] += len(masked - spans.keys())
        for span, kind in spans.items():
            f["masks"] += 1
            unmasked = row is not None and span not in masked  # in a row the build keeps
            if kind in BOOKKEEPING_KINDS:
                f["bookkeeping"] += 1
                f["bookkeeping_masked"] += span in masked
                f["bookkeeping_unmasked_in_kept_rows"] += unmasked
            elif kind == 0:
                f["real"] += 1
                f["real_unmasked_in_kept_rows"] += unmasked
            else:
                f["trivial"] += 1
                f["trivial_masked"] += span in masked
    return f


def _is_ids(path: Path) -> bool:
    """A JSON list of ids: what `--save-ids` writes."""
    try:
        ids = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(ids, list) and all(isinstance(i, str) for i in ids)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m mrtasks.curate.screen", description=__doc__.split("\n\n")[0],
        epilog="exit codes: 0 the sample (or the --labels figures) was printed; 2 bad arguments, a malformed --labels file, or a "
               "folder without a readable masked_then_fill "
               "config; 4 --save-ids refused (a folder, not writable, inside a build, a file that is not a list of ids)",
    )
    p.add_argument("out", type=Path, help="a folder written by python -m mrtasks.build")
    p.add_argument("--rows", type=int, default=200, help="rows to sample (default 200)")
    p.add_argument("--seed", type=int, default=20, help="random.Random seed of the sample (default 20)")
    p.add_argument("--ids", type=Path, help="JSON list of row ids to screen instead of a sample")
    p.add_argument("--save-ids", type=Path, help="write the sampled ids here (JSON) for a later --ids")
    p.add_argument("--context", type=int, default=45, help="characters shown on each side of a mask")
    p.add_argument("--cues", action="store_true", help="only masks near bookkeeping words or holding residue")
    p.add_argument("--labels", type=Path, help="JSONL of labelled masks (id, start, end, kind): print how the build's "
                   "masks compare with them instead of a sample")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.rows < 1 or args.context < 0:
        p.error("--rows must be >= 1 and --context >= 0")
    if not (args.out / "build_stats.json").is_file():
        print(f"error: {args.out} is not a build folder (no build_stats.json)", file=sys.stderr)
        return EXIT_USAGE
    def body() -> int:
        if args.save_ids:
            check_output_file("--save-ids", args.save_ids, "mrtasks.curate.screen", _is_ids)
        labels = read_labels(args.labels) if args.labels else None
        try:
            ids = json.loads(args.ids.read_text()) if args.ids else None
            if ids is not None and not (isinstance(ids, list) and all(isinstance(i, str) for i in ids)):
                raise ValueError("not a JSON list of ids")
            rows = load_rows(args.out)
        except (OSError, ValueError) as e:
            raise ScreenInputError(first_line(e)) from e
        if labels is not None:
            f = label_figures(rows, labels)
            print(f"{args.labels.name} against {args.out}: {f['rows']} labelled rows ({f['rows_gone']} no longer rows), "
                  f"{f['masks']} labelled masks")
            print(f"  bookkeeping (kinds 1-6): {f['bookkeeping']} labelled, {f['bookkeeping_masked']} still masked, "
                  f"{f['bookkeeping_unmasked_in_kept_rows']} no longer masked in rows the build keeps")
            print(f"  real formulas (kind 0): {f['real']} labelled, {f['real_unmasked_in_kept_rows']} no longer masked "
                  "in rows the build keeps")
            print(f"  other trivial masks (kind 7): {f['trivial']} labelled, {f['trivial_masked']} still masked")
            print(f"  masks nobody labelled (new since the labels; read them): {f['unlabelled_masks']}")
            return EXIT_OK
        sample = sample_rows(rows, args.rows, args.seed, ids)
        if ids is not None and len(sample) < len(ids):
            logger.info("%d of %d ids are no longer rows of %s", len(ids) - len(sample), len(ids), args.out)
        if args.save_ids:
            write_output_file("--save-ids", args.save_ids, json.dumps([r["id"] for r in sample]) + "\n")
        for line in screen_lines(sample, args.context, args.cues):
            print(line)
        logger.info("%d rows, %d masks (of %d rows in the build)", len(sample), sum(len(r["masks"]) for r in sample), len(rows))
        return EXIT_OK

    return run_command(body, {OutputError: EXIT_OUTPUT, ScreenInputError: EXIT_USAGE})


if __name__ == "__main__":
    sys.exit(main())
