"""The source presets: how each known corpus or Hub dataset turns a raw row into a bare `Trajectory`.

A preset knows its fields and cleans its quirks (GSM8K calculator notes and `####` answers,
ProofNet's `\\begin{proof}` wrapper, miniF2F's wiki links, R1 reasoning before `</think>`). Presets
are registered by name (`register_preset`, `get_preset`, `list_presets`); `mrtasks.curate.sources`
parses `--source` specs and reads the files, then hands each row to its preset's `normalize`.

A row that does not fit becomes a `Drop` with a counted reason (`missing_field`, `bad_type`,
`empty_field`, `too_long`, `bad_kind`, `no_answer`, `no_correct_response`), never an exception.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from mrtasks.curate.base import Drop
from mrtasks.text import strip_math_delimiters, strip_think
from mrtasks.trajectory import KINDS, Trajectory

DEEPMATH_REPO = "zwhe99/DeepMath-103K"
DEEPMATH_REVISION = "0406dc9d807ab2bfe11423c84468a234c8be18c1"
DEEPTHEOREM_REPO = "Jiahao004/DeepTheorem"
DEEPTHEOREM_REVISION = "f5935720f176cedff4ecd8ebf83d1696e31cfac8"

MAX_PROBLEM_CHARS = 8_000
MAX_SOLUTION_CHARS = 30_000

# File names in ../shared/data/corpora and the preset that reads each (for `corpora:DIR`).
CORPORA_FILES: dict[str, str] = {
    "gsm8k_train_first2000.jsonl": "gsm8k",
    "olympiadbench_oe_en.jsonl": "olympiadbench",
    "qwen_math_cot_100.jsonl": "qwen_cot",
    "proofnet_test.jsonl": "proofnet",
    "proofnet_valid.jsonl": "proofnet",
    "minif2f_informal.jsonl": "minif2f",
}

Row = dict[str, Any]
Result = Trajectory | Drop


class SpecView(Protocol):
    """What a normalizer reads of a parsed `--source` spec (`mrtasks.curate.sources.SourceSpec`).

    Declared here, so that the presets never import the module that parses specs and reads files
    (which imports the presets)."""

    options: dict[str, str]

    @property
    def name(self) -> str: ...

    @property
    def solutions(self) -> int: ...



# --- Text cleaners ---------------------------------------------------------------------------

_CALC = re.compile(r"<<[^<>]*>>")
_GSM8K_ANSWER = re.compile(r"\n?####\s*(.+?)\s*$", re.DOTALL)
_PROOF_ENV = re.compile(r"^\s*\\begin\{proof\}(?:\[[^\]]*\])?\s*(.*?)\s*\\end\{proof\}\s*$", re.DOTALL)
_WIKI_LINK = re.compile(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]")
_QED = re.compile(r"\s*(?:Q\.E\.D\.?|\$?\\(?:blacksquare|qed|square|Box)\$?)\s*$")


def clean_gsm8k(solution: str) -> tuple[str, str | None]:
    """Drop `<<48/2=24>>` calculator notes; take the `#### N` answer off the last line."""
    answer = None
    m = _GSM8K_ANSWER.search(solution)
    if m:
        answer = m.group(1).replace(",", "").strip()
        solution = solution[: m.start()]
    return _CALC.sub("", solution).strip(), answer


def strip_proof_env(solution: str) -> str:
    """Remove a `\\begin{proof} ... \\end{proof}` wrapper around the whole text."""
    m = _PROOF_ENV.match(solution)
    return m.group(1) if m else solution.strip()


def clean_minif2f(solution: str) -> str:
    """AoPS-wiki artifacts: `[[Euclidean algorithm]]` links become plain text; a final Q.E.D. goes."""
    return _QED.sub("", _WIKI_LINK.sub(r"\1", solution)).strip()


def strip_reasoning(solution: str) -> str:
    """Keep what follows `</think>` (R1 traces put the clean write-up after their scratch work);
    a trace that is all reasoning is kept whole."""
    return strip_think(solution).strip() or solution.strip()


def unwrap_dollars(answer: str) -> str:
    """`$x^2$` -> `x^2` (OlympiadBench wraps its final answers in math delimiters)."""
    return strip_math_delimiters(answer)


CLEANERS: dict[str, Callable[[str], str]] = {
    "gsm8k": lambda s: clean_gsm8k(s)[0],
    "proofnet": strip_proof_env,
    "minif2f": clean_minif2f,
    "think": strip_reasoning,
}


# --- Row normalization -----------------------------------------------------------------------


def _text(row: Row, key: str, rid: str) -> str | Drop:
    """A required, non-empty string field, or the Drop that says what is wrong with it."""
    if key not in row or row[key] is None:
        return Drop(rid, "missing_field", key)
    value = row[key]
    if not isinstance(value, str):
        return Drop(rid, "bad_type", f"{key} is {type(value).__name__}")
    if not value.strip():
        return Drop(rid, "empty_field", key)
    return value


def make_trajectory(
    rid: str, source: str, kind: str, problem: Any, solution: Any, answer: Any = None
) -> Result:
    """Validate field values and build a bare trajectory (no formulas or steps yet)."""
    if kind not in KINDS:
        return Drop(rid, "bad_kind", repr(kind)[:80])
    row = {"problem": problem, "solution": solution}
    for key in ("problem", "solution"):
        value = _text(row, key, rid)
        if isinstance(value, Drop):
            return value
    if len(problem) > MAX_PROBLEM_CHARS:
        return Drop(rid, "too_long", f"problem has {len(problem)} chars")
    if len(solution) > MAX_SOLUTION_CHARS:
        return Drop(rid, "too_long", f"solution has {len(solution)} chars")
    if answer is not None and not isinstance(answer, (str, int, float)):
        return Drop(rid, "bad_type", f"answer is {type(answer).__name__}")
    if isinstance(answer, bool):
        return Drop(rid, "bad_type", "answer is bool")
    answer = None if answer is None else str(answer).strip() or None
    return Trajectory(id=rid, source=source, kind=kind, problem=problem.strip(), solution=solution.strip(), answer=answer)


def _rid(source: str, row: Row, index: int, key: str | None) -> str:
    value = row.get(key) if key else None
    if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
        return f"{source}/{str(value).strip()}"
    return f"{source}/{index}"


def _solution_id(rid: str, k: int, n: int) -> str:
    """Ids of several trajectories of one problem share the problem part: `src/12#0`, `src/12#1`."""
    return f"{rid}#{k}" if n > 1 else rid


def problem_origin(trajectory_id: str) -> str:
    """The id of the source problem a trajectory belongs to (strips the `#k` solution suffix)."""
    return trajectory_id.split("#", 1)[0]


def normalize_gsm8k(row: Row, i: int, spec: SpecView) -> list[Result]:
    rid = _rid(spec.name, row, i, None)
    raw = _text(row, "answer", rid)
    if isinstance(raw, Drop):
        return [raw]
    solution, answer = clean_gsm8k(raw)
    if answer is None:
        return [Drop(rid, "no_answer", "no #### line")]
    return [make_trajectory(rid, spec.name, "computation", row.get("question"), solution, answer)]


def normalize_olympiadbench(row: Row, i: int, spec: SpecView) -> list[Result]:
    rid = _rid(spec.name, row, i, "id")
    problem = row.get("question")
    context = row.get("context")
    if isinstance(problem, str) and isinstance(context, str) and context.strip():
        problem = f"{context.strip()}\n\n{problem}"
    solutions, answers = row.get("solution"), row.get("final_answer")
    if isinstance(solutions, str):
        solutions = [solutions]
    if not isinstance(solutions, list) or not solutions:
        return [Drop(rid, "missing_field", "solution")]
    if isinstance(answers, str):
        answers = [answers]
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        return [Drop(rid, "bad_type", "final_answer")]
    answer = ", ".join(unwrap_dollars(a) for a in answers) or None
    n = min(spec.solutions, len(solutions))
    return [
        make_trajectory(_solution_id(rid, k, n), spec.name, "computation", problem, solutions[k], answer)
        for k in range(n)
    ]


def normalize_qwen_cot(row: Row, i: int, spec: SpecView) -> list[Result]:
    """Model CoTs: keep only responses the file scores correct (`score[k] is True`)."""
    rid = _rid(spec.name, row, i, "idx")
    responses, scores = row.get("response"), row.get("score")
    if not isinstance(responses, list) or not responses:
        return [Drop(rid, "missing_field", "response")]
    if not isinstance(scores, list) or len(scores) != len(responses):
        scores = [True] * len(responses)
    correct = [r for r, ok in zip(responses, scores) if ok is True and isinstance(r, str)]
    if not correct:
        return [Drop(rid, "no_correct_response")]
    answer = row.get("gt", row.get("answer"))
    n = min(spec.solutions, len(correct))
    return [
        make_trajectory(_solution_id(rid, k, n), spec.name, "computation", row.get("question"), correct[k], answer)
        for k in range(n)
    ]


def normalize_proofnet(row: Row, i: int, spec: SpecView) -> list[Result]:
    rid = _rid(spec.name, row, i, "id")
    proof = _text(row, "nl_proof", rid)
    if isinstance(proof, Drop):
        return [proof]
    return [make_trajectory(rid, spec.name, "proof", row.get("nl_statement"), strip_proof_env(proof))]


def normalize_minif2f(row: Row, i: int, spec: SpecView) -> list[Result]:
    rid = _rid(spec.name, row, i, "problem_name")
    proof = _text(row, "informal_proof", rid)
    if isinstance(proof, Drop):
        return [proof]
    problem = row.get("informal_statement")
    if isinstance(problem, str):
        problem = _WIKI_LINK.sub(r"\1", problem)
    return [make_trajectory(rid, spec.name, "proof", problem, clean_minif2f(proof))]


def normalize_deepmath(row: Row, i: int, spec: SpecView) -> list[Result]:
    """DeepMath-103K: question, final_answer, r1_solution_1..3 (R1 traces; the part after
    `</think>` is kept, the paper's o3-mini refine pass is `--refine` with the llm annotator)."""
    rid = _rid(spec.name, row, i, None)
    solutions = [row.get(f"r1_solution_{k}") for k in (1, 2, 3)]
    solutions = [strip_reasoning(s) for s in solutions if isinstance(s, str) and s.strip()]
    if not solutions:
        return [Drop(rid, "missing_field", "r1_solution_1")]
    n = min(spec.solutions, len(solutions))
    return [
        make_trajectory(
            _solution_id(rid, k, n), spec.name, "computation", row.get("question"), solutions[k], row.get("final_answer")
        )
        for k in range(n)
    ]


def normalize_deeptheorem(row: Row, i: int, spec: SpecView) -> list[Result]:
    """DeepTheorem: informal_theorem + proof (o3-mini proofs); ids from the `id` column."""
    rid = _rid(spec.name, row, i, "id")
    proof = _text(row, "proof", rid)
    if isinstance(proof, Drop):
        return [proof]
    return [make_trajectory(rid, spec.name, "proof", row.get("informal_theorem"), strip_reasoning(proof))]


def normalize_sample(row: Row, i: int, spec: SpecView) -> list[Result]:
    """The bundled sample rows are already normalized records."""
    rid = _rid(spec.name, row, i, "id") if not isinstance(row.get("id"), str) else str(row["id"])
    return [
        make_trajectory(
            rid, str(row.get("source", spec.name)), row.get("kind"), row.get("problem"), row.get("solution"), row.get("answer")
        )
    ]


def normalize_mapped(row: Row, i: int, spec: SpecView) -> list[Result]:
    """A local file read through the spec's field mapping (see the module docstring)."""
    opts = spec.options
    rid = _rid(spec.name, row, i, opts.get("id"))
    kind = opts.get("kind", "computation")
    if kind not in KINDS:
        kind = row.get(kind)
    problem = row.get(opts.get("problem", "problem"))
    solution = row.get(opts.get("solution", "solution"))
    solution_field = opts.get("solution", "solution")
    answer_field = opts.get("answer", "answer" if solution_field != "answer" else None)
    answer = row.get(answer_field) if answer_field else None
    fmt = opts.get("format")
    if isinstance(solution, str) and fmt:
        if fmt == "gsm8k":
            solution, gsm_answer = clean_gsm8k(solution)
            answer = answer if "answer" in opts else gsm_answer
        else:
            solution = CLEANERS[fmt](solution)
    for key, value in (("problem", problem), ("solution", solution)):
        if value is None:
            return [Drop(rid, "missing_field", opts.get(key, key))]
    return [make_trajectory(rid, spec.name, kind, problem, solution, answer)]


# --- The registry ----------------------------------------------------------------------------


def _read_synthetic(spec: SpecView) -> Any:
    """Rows of `synthetic[:arith][:size=N,difficulty=D,seed=S]` (imported on use)."""
    from mrtasks.curate.synthetic import read_rows

    return read_rows(spec)


Normalizer = Callable[[Row, int, SpecView], list[Result]]


@dataclass(frozen=True)
class Preset:
    """One named source format. `kind`: `file` (needs a path), `hub` (a pinned Hub dataset),
    `bundled` (the packaged sample), `folder` (`corpora:DIR`, expanded into file presets) or
    `generated` (rows made by `read(spec)`; the optional path names the generator)."""

    name: str
    normalize: Normalizer
    kind: str = "file"
    repo: str | None = None
    revision: str | None = None
    """The pinned Hub commit a `hub` preset reads (`revision=` in the spec overrides it); for a
    `generated` preset, the generator's version."""
    license: str | None = None
    """The source's license (a Hub license id such as `mit`), for the card; None where it is not known."""
    read: Callable[[SpecView], Any] | None = None
    """`generated` presets: the spec -> an iterator of raw rows."""


PRESET_REGISTRY: dict[str, Preset] = {}
PRESETS: dict[str, Normalizer] = {}
"""name -> normalize, for every registered preset (kept in step by `register_preset`)."""
HUB_PRESETS: dict[str, str] = {}
"""name -> Hub repo, for the `hub` presets."""


def register_preset(preset: Preset) -> Preset:
    """Add a preset (a new corpus format = one normalizer and one call here)."""
    if preset.kind not in ("file", "hub", "bundled", "folder", "generated"):
        raise ValueError(f"unknown preset kind {preset.kind!r}")
    if preset.kind == "hub" and not (preset.repo and preset.revision):
        raise ValueError(f"hub preset {preset.name!r} needs a repo and a pinned revision")
    if (preset.kind == "generated") != (preset.read is not None):
        raise ValueError(f"preset {preset.name!r}: a `generated` preset, and only one, has a reader")
    PRESET_REGISTRY[preset.name] = preset
    PRESETS[preset.name] = preset.normalize
    if preset.kind == "hub":
        HUB_PRESETS[preset.name] = preset.repo  # type: ignore[assignment]
    return preset


def get_preset(name: str) -> Preset | None:
    return PRESET_REGISTRY.get(name)


def list_presets(kind: str | None = None) -> list[str]:
    return [name for name, p in PRESET_REGISTRY.items() if kind is None or p.kind == kind]


# Licenses as the sources state them (../shared/data/SOURCES.md for the corpora, the Hub cards for
# DeepMath-103K); DeepTheorem's training data states none we could check, so it is left unknown.
for _preset in (
    Preset("gsm8k", normalize_gsm8k, license="mit"),
    Preset("olympiadbench", normalize_olympiadbench, license="apache-2.0"),
    Preset("qwen_cot", normalize_qwen_cot, license="mit"),
    Preset("proofnet", normalize_proofnet, license="mit"),
    Preset("minif2f", normalize_minif2f, license="mit"),
    Preset("deepmath", normalize_deepmath, "hub", DEEPMATH_REPO, DEEPMATH_REVISION, license="mit"),
    Preset("deeptheorem", normalize_deeptheorem, "hub", DEEPTHEOREM_REPO, DEEPTHEOREM_REVISION),
    Preset("sample", normalize_sample, "bundled", license="apache-2.0"),  # written for this project
    Preset("corpora", normalize_sample, "folder"),  # expanded into the file presets by `expand_specs`
    # Synthetic worked solutions for the CPU learning testbed (mrtasks.curate.synthetic).
    Preset("synthetic", normalize_sample, "generated", revision="arith-v2", read=_read_synthetic),
):
    register_preset(_preset)
