"""`python -m mrtasks.curate.annotator_bench`: the heuristic or the LLM annotator against hand labels.

The fixture (`tests/data/annotator_gold.jsonl`) holds, for solutions of ../shared/data/corpora
(referenced by id; the text is read from the corpora, never copied), the key formulas and theorem
names a careful annotator following the paper's Appendix A picks, ranked, and the start of each
step. The labels were written and committed before the ranking was tuned; rows marked `heldout`
were never looked at while tuning and are reported separately. A fixture whose texts live in
other local files is read with `--source SPEC` (the build's source syntax, repeatable) instead of
`--corpora`; `tests/data/ANNOTATOR_GOLD.md` says how to recreate them. `--fixture` repeats: the
files' rows are pooled, so the frozen rounds give one held-out figure. `--by kind|source` adds
figures per group. `--second-labelling FILE` scores another labelling of the same rows in place of the
annotator: the labellers' agreement, which bounds what any annotator can score against one of them.

`--annotator llm` measures the paper's LLM annotator (`mrtasks.curate.llm`: the Appendix A.1 prompts
to any OpenAI-compatible endpoint) in place of the heuristic, with the build's endpoint options
(`--model`, `--base-url`, `--concurrency`, `--cache`, ...): every fixture solution is annotated in
one batch, answers go to the sqlite `--cache` (a rerun over it sends no request), and a solution the
annotator drops (an answer still invalid after its retries, an API error) is scored as an empty
labelling (no formulas, no steps) and counted, by reason, in the header and under `dropped` in the
`--json` output. An endpoint that answers no request at all is an error (exit 5), not a score of 0.

Figures (micro-averaged over rows):
- top-7 precision: the share of the annotator's first 7 formulas that are gold formulas;
- masked-set precision: the same over rows eligible for Masked-Then-Fill (>= 7 formulas), i.e.
  over the masks a build would make;
- recall of gold top-7: the share of each row's 7 best gold formulas among the first 7;
- step boundaries: precision, recall and F1 of the cut positions (whitespace ignored); `--by-layout` adds, for
  cuts at a blank line, at a single line break and inside a line, how many the annotator makes, how many of those the
  labels keep and how many gold cuts it misses there (granularity in dense paragraphs shows in the last).

A formula matches a gold one when both are equal after removing whitespace, `$`, alignment `&`,
sizing commands, a `\\boxed{}` wrapper, a leading relation or implication arrow and final punctuation, or when one
contains the other and is at least 70% of its length; theorem names match by `theorem_names_equal`.
A formula also matches a gold line whose (last) box holds it (`84` and `m + M = \\boxed{84}`):
the final answer is masked as the box's content (the fill format is `\\boxed{..}`), while an
annotator may name the whole line.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mrtasks.curate.base import Drop
from mrtasks.curate.heuristic import HeuristicAnnotator
from mrtasks.jsonl import iter_jsonl
from mrtasks.mathcheck import theorem_names_equal
from mrtasks.mathcheck.latex import last_boxed
from mrtasks.trajectory import Trajectory

if TYPE_CHECKING:
    from mrtasks.curate.llm import LLMConfig

logger = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_FIXTURE = REPO_ROOT / "tests" / "data" / "annotator_gold.jsonl"
# ../shared/data/corpora beside the checkout, wherever the command is run from.
DEFAULT_CORPORA = REPO_ROOT.parent / "shared" / "data" / "corpora"
FIXTURE_KEYS = ("id", "split", "formulas", "steps", "solution_sha256")
TOP_K = 7

_NOISE = re.compile(r"\\(?:left|right|displaystyle|[,;:! ]|quad|qquad)(?![A-Za-z])|[\s$&~]")
# A relation or implication that opens an aligned line (`&= x`, `\Longrightarrow & p = q`): not content.
_LEAD_REL = re.compile(
    r"^(?:=|\\(?:approx|equiv|le|ge|leq|geq|Rightarrow|Longrightarrow|implies|iff|Leftrightarrow|Longleftrightarrow)(?![A-Za-z]))"
)


def normalize_formula(text: str) -> str:
    """The comparison key of a formula (see the module docstring)."""
    t = _NOISE.sub("", text).rstrip(".,;:")
    if t.startswith("\\boxed{") and t.endswith("}"):
        t = t[7:-1]
    return _LEAD_REL.sub("", t)


def formula_matches(pred: str, gold: str) -> bool:
    """True when a predicted formula (or theorem name) is the gold one (see the module docstring)."""
    names = theorem_names_equal(pred, gold)
    if names is not None:
        return names
    p, g = normalize_formula(pred), normalize_formula(gold)
    if not p or not g:
        return False
    if p == g:
        return True
    if "\\boxed" in gold and (answer := last_boxed(gold)) is not None and normalize_formula(answer) == p:
        return True  # the final answer as the box's content
    short, long_ = sorted((p, g), key=len)
    return short in long_ and len(short) >= 0.7 * len(long_)


def _first_nonspace(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def step_boundaries(solution: str, steps: list[str]) -> set[int]:
    """Cut positions (first non-space character of every step after the first) of steps that start verbatim, up to
    whitespace (an `llm` step may respace the text: `check_steps` accepts it); a step whose start is not found
    makes no cut."""
    where = [i for i, ch in enumerate(solution) if not ch.isspace()]  # compact index -> solution index
    compact_solution = "".join(solution[i] for i in where)
    cuts, pos = set(), 0
    for k, step in enumerate(steps):
        needle = "".join(step.split())[:40]
        j = compact_solution.find(needle, pos) if needle else -1
        if j < 0:
            continue
        if k:
            cuts.add(where[j])
        pos = j + 1
    return cuts


def gold_boundaries(solution: str, starts: list[str]) -> set[int]:
    cuts, pos = set(), -1
    for k, snippet in enumerate(starts):
        j = solution.find(snippet, pos + 1)
        if j < 0:
            raise ValueError(f"gold step start {snippet!r} not found")
        if k:
            cuts.add(_first_nonspace(solution, j))
        pos = j
    return cuts


CUT_LAYOUTS = ("blank line", "line break", "inside a line")


def cut_layout(solution: str, cut: int) -> str:
    """Where a cut falls: after a blank line, after a single line break, or between sentences of one line."""
    gap = solution[len(solution[:cut].rstrip()) : cut]
    return CUT_LAYOUTS[0] if re.search(r"\n[ \t]*\n", gap) else CUT_LAYOUTS[1] if "\n" in gap else CUT_LAYOUTS[2]


@dataclass
class Tally:
    """Counts behind the figures of one group of rows."""

    rows: int = 0
    top_hit: int = 0
    top_n: int = 0
    masked_hit: int = 0
    masked_n: int = 0
    eligible: int = 0
    recall_hit: int = 0
    recall_n: int = 0
    cut_tp: int = 0
    cut_pred: int = 0
    cut_gold: int = 0
    layouts: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(layout, `kept` / `dropped` / `missed`): the annotator's cuts the labels keep or not, and gold cuts it misses."""
    misses: list[dict[str, Any]] = field(default_factory=list)

    def figures(self) -> dict[str, Any]:
        p = self.cut_tp / self.cut_pred if self.cut_pred else 0.0
        r = self.cut_tp / self.cut_gold if self.cut_gold else 0.0
        ratio = lambda a, b: round(a / b, 4) if b else 0.0  # noqa: E731
        return {
            "rows": self.rows,
            "top7_precision": ratio(self.top_hit, self.top_n),
            "masked_set_precision": ratio(self.masked_hit, self.masked_n),
            "eligible_rows": self.eligible,
            "gold_top7_recall": ratio(self.recall_hit, self.recall_n),
            "step_precision": round(p, 4),
            "step_recall": round(r, 4),
            "step_f1": round(2 * p * r / (p + r), 4) if p + r else 0.0,
        }

    def by_layout(self) -> dict[str, dict[str, int]]:
        """Per cut layout: the annotator's cuts, how many the labels keep, and the gold cuts it misses there."""
        return {
            where: {"cuts": self.layouts[where, "kept"] + self.layouts[where, "dropped"],
                    "kept": self.layouts[where, "kept"], "gold_missed": self.layouts[where, "missed"]}
            for where in CUT_LAYOUTS
        }


def load_fixture(
    fixture: Path | list[Path], corpora: Path, sources: list[str] | None = None, by: str | None = None
) -> list[tuple[dict[str, Any], Trajectory]]:
    """The rows of one fixture, or of several pooled (each file's rows in turn), with their trajectories read
    from the corpora, or from `sources` (source specs) when given; each text is checked against the row's hash.
    A malformed row (see `fixture_row_problem`; `by` is the field `--by` groups on), an id repeated within a
    file or a step start not found in its text is a ValueError naming the file, the row and the field. Two files
    may label the same solution (a second labelling pooled with the first): each of their rows is scored."""
    from mrtasks.curate.sources import expand_specs, iter_source, parse_source

    read = [_fixture_rows(f, by) for f in (fixture if isinstance(fixture, list) else [fixture])]
    if not sources and not corpora.is_dir():
        raise ValueError(f"--corpora {corpora}: no such folder (the shared corpora, ../shared/data/corpora beside "
                         "the checkout; pass --corpora DIR)")
    want = {r["id"] for _, rows in read for r, _ in rows}
    found: dict[str, Trajectory] = {}
    where = ", ".join(sources) if sources else str(corpora)
    for spec in expand_specs([parse_source(s) for s in sources or [f"corpora:{corpora}"]]):
        for t in iter_source(spec):
            if not isinstance(t, Drop) and t.id in want:
                found[t.id] = t
    out = []
    for path, rows in read:
        for r, (n, lineno) in rows:
            t = found.get(r["id"])
            if t is None:
                raise ValueError(f"fixture id {r['id']} not found in {where} (a truncated or other corpus file?)")
            if hashlib.sha256(t.solution.encode()).hexdigest()[:16] != r["solution_sha256"]:
                raise ValueError(f"the solution of {r['id']} changed since it was labelled")
            try:
                gold_boundaries(t.solution, r["steps"])
            except ValueError as e:
                raise ValueError(f"{path}: row {n} (line {lineno}, id {r['id']}): 'steps': {e} in the solution "
                                 "(after the start before it)") from None
            out.append((r, t))
    return out


def _fixture_rows(fixture: Path, by: str | None) -> tuple[Path, list[tuple[dict[str, Any], tuple[int, int]]]]:
    """A fixture file's well-formed rows, each with its row and line number (see `load_fixture`)."""
    if not fixture.is_file():
        raise ValueError(f"--fixture {fixture}: no such file")
    # A bad line is a JSONLError (a ValueError) naming it.
    numbered = [(lineno, r) for lineno, r in iter_jsonl(fixture) if isinstance(r, dict)]
    if not numbered:
        raise ValueError(f"--fixture {fixture}: no labelled rows (an empty file?)")
    rows: list[tuple[dict[str, Any], tuple[int, int]]] = []
    first_row: dict[str, int] = {}
    for n, (lineno, r) in enumerate(numbered, 1):
        where = f"{fixture}: row {n} (line {lineno})"
        problem = fixture_row_problem(r, by)
        if problem:
            raise ValueError(f"{where}: {problem}")
        if r["id"] in first_row:
            raise ValueError(f"{where}: id {r['id']!r} repeats row {first_row[r['id']]}; each solution is labelled once")
        first_row[r["id"]] = n
        rows.append((r, (n, lineno)))
    return fixture, rows


def _what(value: Any) -> str:
    """How a JSON value reads in an error line."""
    if value is None:
        return "null"
    kinds = ((bool, "a boolean"), (int, "a number"), (float, "a number"), (str, "a string"), (list, "a list"),
             (dict, "an object"))
    return next((name for t, name in kinds if isinstance(value, t)), type(value).__name__)


def fixture_row_problem(row: dict[str, Any], by: str | None = None) -> str | None:
    """Why a fixture row is malformed (a missing key, a value of the wrong type, a blank entry), or None.

    `id` and `solution_sha256` (16 lowercase hex digits) are strings, `split` is `tune` or
    `heldout`, `formulas` and `steps` are lists of non-blank strings; `kind` and `source`, when
    present (and the one `--by` names, always), are strings."""
    missing = [k for k in FIXTURE_KEYS if k not in row]
    if missing:
        return (f"needs {', '.join(FIXTURE_KEYS)} with split tune or heldout "
                f"(missing {', '.join(map(repr, missing))})")
    if not isinstance(row["id"], str) or not row["id"].strip():
        return f"'id' must be a non-empty string, not {_what(row['id'])}"
    if row["split"] not in ("tune", "heldout"):
        shown = repr(row["split"]) if isinstance(row["split"], str) else _what(row["split"])
        return f"'split' must be tune or heldout, not {shown}"
    sha = row["solution_sha256"]
    if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{16}", sha):
        shown = repr(sha) if isinstance(sha, str) else _what(sha)
        return f"'solution_sha256' must be a string of 16 lowercase hex digits (the first of the SHA-256), not {shown}"
    for key in ("formulas", "steps"):
        value = row[key]
        if not isinstance(value, list):
            return f"{key!r} must be a list of strings, not {_what(value)}"
        for k, item in enumerate(value):
            if not isinstance(item, str):
                return f"{key!r} must be a list of strings; item {k} is {_what(item)}"
            if not item.strip():
                return f"{key!r} item {k} is a blank string"
    for key in ("kind", "source"):
        if key == by and key not in row:
            return f"has no {key!r} (--by {key} groups the rows by it)"
        if key in row and not isinstance(row[key], str):
            return f"{key!r} must be a string, not {_what(row[key])}"
    return None


Labels = tuple[list[str], list[str]]
"""A labelling of one solution: its ranked formulas and its steps (or the verbatim start of each)."""


def _labels(out: Trajectory | Drop | Labels) -> Labels:
    if isinstance(out, Drop):
        return [], []
    if isinstance(out, tuple):
        return out
    return [f.text for f in out.formulas], out.steps


def second_labeller(
    items: list[tuple[dict[str, Any], Trajectory]], ids: list[str], name: str = "the second labelling"
) -> Callable[[Trajectory], Labels]:
    """Another labelling (fixture rows, as `load_fixture` reads them) of the rows `ids` as an annotator: scored
    against the fixture, its figures are the labellers' agreement, the ceiling of the annotator's. A ValueError
    names the first row of `ids` it lacks."""
    by_id = {row["id"]: (row["formulas"], row["steps"]) for row, _ in items}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise ValueError(f"{name} has no row {missing[0]} ({len(missing)} fixture row(s) missing)")
    return lambda traj: by_id[traj.id]


def evaluate(
    items: list[tuple[dict[str, Any], Trajectory]],
    annotate: Callable[[Trajectory], Trajectory | Drop | Labels],
    min_formulas: int = 7,
) -> dict[str, Tally]:
    """Score an annotator (or another labelling, see `second_labeller`) on fixture rows; tallies per split
    (`tune`, `heldout`) and `all`."""
    tallies: dict[str, Tally] = {"tune": Tally(), "heldout": Tally(), "all": Tally()}
    for gold, traj in items:
        formulas, steps = _labels(annotate(traj))
        top = formulas[:TOP_K]
        hits = [any(formula_matches(p, g) for g in gold["formulas"]) for p in top]
        recall = [any(formula_matches(p, g) for p in top) for g in gold["formulas"][:TOP_K]]
        pred_cuts = step_boundaries(traj.solution, steps)
        gold_cuts = gold_boundaries(traj.solution, gold["steps"])
        for name in (gold["split"], "all"):
            t = tallies[name]
            t.rows += 1
            t.top_hit += sum(hits)
            t.top_n += len(top)
            if len(formulas) >= min_formulas:
                t.eligible += 1
                t.masked_hit += sum(hits)
                t.masked_n += len(top)
            t.recall_hit += sum(recall)
            t.recall_n += len(recall)
            t.cut_tp += len(pred_cuts & gold_cuts)
            t.cut_pred += len(pred_cuts)
            t.cut_gold += len(gold_cuts)
            for cut in pred_cuts | gold_cuts:
                fate = "missed" if cut not in pred_cuts else "kept" if cut in gold_cuts else "dropped"
                t.layouts[cut_layout(traj.solution, cut), fate] += 1
            if name == "all":
                t.misses += [{"id": traj.id, "wrong": p} for p, h in zip(top, hits) if not h]
    return tallies


EXIT_ANNOTATOR = 5
"""The llm endpoint answered no request, refused the key or the model, or the --cache file is unusable."""


@dataclass
class LLMRun:
    """What `annotate_with_llm` reports beside the labellings: the rows dropped, and the calls made."""

    dropped: dict[str, Drop]
    stats: dict[str, int]

    def reasons(self) -> dict[str, int]:
        """Dropped rows per reason, most first."""
        return dict(Counter(d.reason for d in self.dropped.values()).most_common())

    def header(self) -> str:
        """The drops for the table's header line: `0 dropped` or `2 dropped, scored as empty: llm_invalid_json 2`."""
        if not self.dropped:
            return "0 dropped"
        why = ", ".join(f"{reason} {n}" for reason, n in self.reasons().items())
        return f"{len(self.dropped)} dropped, scored as empty: {why}"

    def report(self) -> dict[str, Any]:
        """The `dropped` entry of the --json output."""
        return {"rows": len(self.dropped), "reasons": self.reasons(),
                "ids": {i: f"{d.reason}: {d.detail}" if d.detail else d.reason for i, d in self.dropped.items()}}


LLM_CALL_STATS = ("requests", "cache_hits", "transport_retries", "oversized_responses", "retried_answers")
"""The annotator's counts reported under `llm_calls` (see `LLMAnnotator.stats`)."""


class EndpointError(Exception):
    """The llm annotator could not be used at all (exit 5, one line)."""


def annotate_with_llm(
    items: list[tuple[dict[str, Any], Trajectory]], config: LLMConfig
) -> tuple[Callable[[Trajectory], Trajectory | Drop], LLMRun]:
    """Annotate every fixture solution in one `LLMAnnotator.annotate` call (its concurrency and cache
    apply) and return a lookup by id for `evaluate` with the drops. An endpoint that answered no
    request (every row an `llm_api_error`), an `LLMError` or an unusable cache is an EndpointError."""
    from mrtasks.curate.cache import CacheError
    from mrtasks.curate.llm import LLMAnnotator, LLMError

    trajectories = [traj for _, traj in items]
    # The report lists every dropped row with its reason; the annotator's warning per reason would repeat it.
    llm_logger = logging.getLogger(LLMAnnotator.__module__)
    level = llm_logger.level
    llm_logger.setLevel(logging.ERROR)
    try:
        with LLMAnnotator(config) as annotator:
            results = annotator.annotate(trajectories)
            stats = dict(annotator.stats)
    except (LLMError, CacheError) as e:
        raise EndpointError(str(e)) from None
    except ModuleNotFoundError as e:
        if e.name != "openai":
            raise
        raise EndpointError(f"--annotator llm needs `pip install mr-rlvr[llm]` ({e})") from None
    finally:
        llm_logger.setLevel(level)
    by_id = {traj.id: out for traj, out in zip(trajectories, results)}
    dropped = {i: out for i, out in by_id.items() if isinstance(out, Drop)}
    if dropped and all(d.reason == "llm_api_error" for d in dropped.values()) and len(dropped) == len(by_id):
        first = next(iter(dropped.values()))
        raise EndpointError(f"{config.endpoint} answered no request (all {len(dropped)} solutions failed: {first.detail})")
    return (lambda traj: by_id[traj.id]), LLMRun(dropped, {k: stats.get(k, 0) for k in LLM_CALL_STATS})


def main(argv: list[str] | None = None) -> None:
    from mrtasks.curate.llm import add_endpoint_arguments, llm_config_from_args

    p = argparse.ArgumentParser(
        prog="python -m mrtasks.curate.annotator_bench", description=__doc__.splitlines()[0],
        epilog="exit codes: 0 the figures were printed (with --annotator llm, rows the annotator dropped are scored "
               "as empty and counted); 2 bad arguments, or a fixture or corpora folder that is "
               "missing, malformed or does not hold the labelled solutions; 5 --annotator llm: the endpoint answered "
               "no request (down, refusing connections, every call failed), refused the key or the model, or the "
               "--cache file is unusable; 130 interrupted",
    )
    p.add_argument("--fixture", type=Path, action="append",
                   help="labelled JSONL (default: the bundled fixture); repeatable: the files' rows are pooled, e.g. "
                        "every frozen round for one held-out figure")
    p.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA,
                   help="corpora folder (default: ../shared/data/corpora beside the checkout)")
    p.add_argument("--source", action="append", metavar="SPEC",
                   help="read the solutions from this source instead of --corpora (build syntax, e.g. "
                   "FILE.jsonl:kind=kind,id=id,name=external; repeatable)")
    p.add_argument("--by", choices=("kind", "source"), help="also report the figures per fixture kind or source")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--misses", action="store_true", help="also list the top-7 formulas that are not gold")
    p.add_argument("--by-layout", action="store_true",
                   help="also report the step cuts by where they fall (blank line, line break, inside a line): how "
                        "many the annotator makes, how many the labels keep, how many gold cuts it misses")
    p.add_argument("--second-labelling", type=Path, metavar="FILE",
                   help="score this labelling of the same rows (a fixture file) instead of the annotator: the "
                        "labellers' agreement, the ceiling of the annotator's figures")
    p.add_argument("--annotator", choices=("heuristic", "llm"), default="heuristic",
                   help="the annotator scored (default: heuristic, offline); llm: the paper's LLM annotator at "
                        "--base-url, which needs --model")
    add_endpoint_arguments(p.add_argument_group("llm annotator (--annotator llm; the build's options)"))
    args = p.parse_args(argv)
    from mrtasks.curate.sources import SourceError

    fixtures: list[Path] = args.fixture or [DEFAULT_FIXTURE]
    llm_config = None
    if args.annotator == "llm":
        if args.second_labelling:
            p.error("--second-labelling scores a labelling in place of the annotator; it does not go with --annotator llm")
        try:
            llm_config = llm_config_from_args(args, progress=sys.stderr.isatty())
        except ValueError as e:
            p.error(str(e))
    try:
        items = load_fixture(fixtures, args.corpora, args.source, by=args.by)
        annotate: Callable[[Trajectory], Trajectory | Drop | Labels] = HeuristicAnnotator().annotate_one
        if args.second_labelling:
            annotate = second_labeller(load_fixture(args.second_labelling, args.corpora, args.source),
                                       [gold["id"] for gold, _ in items], f"--second-labelling {args.second_labelling}")
    except (ValueError, SourceError) as e:  # a missing row, a changed text, a bad spec: one line, not a traceback
        p.error(str(e))
    llm_run = None
    try:
        if llm_config is not None:
            annotate, llm_run = annotate_with_llm(items, llm_config)
        labelled = {traj.id: annotate(traj) for _, traj in items}  # once: `--by` scores each group again
        annotate = lambda traj: labelled[traj.id]  # noqa: E731
        tallies = evaluate(items, annotate)
        groups = dict(tallies)
        for group in sorted({gold[args.by] for gold, _ in items}) if args.by else []:
            part = [(gold, traj) for gold, traj in items if gold[args.by] == group]
            groups |= {f"{group}/{name}": t for name, t in evaluate(part, annotate).items() if t.rows}
        figures = {name: t.figures() for name, t in groups.items()}
    except EndpointError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(EXIT_ANNOTATOR) from None
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        raise SystemExit(130) from None
    layouts = {name: t.by_layout() for name, t in groups.items() if t.rows} if args.by_layout else {}
    if args.json:
        extra = {"dropped": llm_run.report(), "llm_calls": llm_run.stats} if llm_run else {}
        extra |= {"cuts_by_layout": layouts} if layouts else {}
        print(json.dumps(figures | extra, indent=2))
    else:
        who = f"labelling {args.second_labelling.name}" if args.second_labelling else "heuristic annotator"
        if llm_run:
            who = f"llm annotator {args.model}"
        drops = f"; {llm_run.header()}" if llm_run else ""
        print(f"{who} vs {' + '.join(f.name for f in fixtures)} ({len(items)} solutions{drops})")
        cols = list(figures["all"])
        width = max(8, *map(len, figures))
        print(f"  {'split':{width}}" + "".join(f"{c:>22}" for c in cols))
        for name, f in figures.items():
            print(f"  {name:{width}}" + "".join(f"{f[c]:>22}" for c in cols))
        if llm_run:
            for i, why in llm_run.report()["ids"].items():
                print(f"  dropped: {i}: {why[:160]}")
            print("  llm calls: " + ", ".join(f"{k.replace('_', ' ')} {n}" for k, n in llm_run.stats.items()))
        for name, by in layouts.items():
            print(f"  cuts, {name}: " + "; ".join(
                f"{where} {f['kept']} of {f['cuts']} kept" + (f" ({f['kept'] / f['cuts']:.2f})" if f["cuts"] else "")
                + f", {f['gold_missed']} gold missed" for where, f in by.items()))
    if args.misses:
        for m in tallies["all"].misses:
            print(f"  not gold: {m['id']}: {m['wrong'][:100]!r}")


if __name__ == "__main__":
    main()
