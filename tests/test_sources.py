"""Sources: presets for the shared corpora and the Hub, mapped local files, malformed rows."""

from __future__ import annotations

import json

import pytest
from datasets import Dataset

from mrtasks.curate.base import Drop
from mrtasks.curate.sources import (
    DEEPMATH_REVISION,
    DEEPTHEOREM_REVISION,
    MAX_SOLUTION_CHARS,
    SourceError,
    expand_specs,
    iter_source,
    normalize_deepmath,
    normalize_deeptheorem,
    parse_source,
    problem_origin,
)
from mrtasks.trajectory import Trajectory


def read(spec: str) -> tuple[list[Trajectory], list[Drop]]:
    items = list(iter_source(parse_source(spec)))
    return [t for t in items if isinstance(t, Trajectory)], [d for d in items if isinstance(d, Drop)]


def test_parse_source_specs():
    assert parse_source("sample").preset == "sample"
    s = parse_source("gsm8k:data/g.jsonl:limit=5")
    assert (s.preset, s.path, s.limit) == ("gsm8k", "data/g.jsonl", 5)
    d = parse_source("deepmath:solutions=3")
    assert (d.preset, d.solutions, d.revision) == ("deepmath", 3, DEEPMATH_REVISION)
    assert parse_source("deeptheorem").revision == DEEPTHEOREM_REVISION
    m = parse_source("x.jsonl:problem=question,solution=answer,kind=computation")
    assert (m.preset, m.path, m.name) == ("file", "x.jsonl", "x")
    assert m.options == {"problem": "question", "solution": "answer", "kind": "computation"}
    for bad in ["", "nope.txt", "gsm8k", "sample:some/path", "x.jsonl:limit=zero", "x.jsonl:limit=0", "x.jsonl:oops"]:
        with pytest.raises(SourceError):
            spec = parse_source(bad)
            _ = spec.limit


def test_gsm8k_notes_removed_and_answer_taken(shared_data):
    trajs, drops = read(f"gsm8k:{shared_data}/corpora/gsm8k_train_first2000.jsonl:limit=50")
    assert len(trajs) == 50 and not drops
    t = trajs[0]
    assert t.kind == "computation" and t.answer == "72"
    assert t.solution == "Natalia sold 48/2 = 24 clips in May.\nNatalia sold 48+24 = 72 clips altogether in April and May."
    assert not any("<<" in t.solution or "####" in t.solution for t in trajs)


def test_proof_presets_strip_wrappers_and_wiki_links(shared_data):
    proofs, drops = read(f"proofnet:{shared_data}/corpora/proofnet_test.jsonl")
    assert len(proofs) + len(drops) == 186 and [d.reason for d in drops] == ["empty_field"]
    assert all(t.kind == "proof" and t.answer is None for t in proofs)
    assert not any("\\begin{proof}" in t.solution or "\\end{proof}" in t.solution for t in proofs)
    assert proofs[0].id == "proofnet/Rudin|exercise_1_1b"  # a preset names its rows after itself
    mini, _ = read(f"minif2f:{shared_data}/corpora/minif2f_informal.jsonl")
    assert len(mini) == 488
    assert not any("[[" in t.solution or "[[" in t.problem for t in mini)
    assert mini[0].solution.startswith("The logarithmic notation")


def test_olympiadbench_and_qwen_cot(shared_data):
    ob, _ = read(f"olympiadbench:{shared_data}/corpora/olympiadbench_oe_en.jsonl:limit=20")
    assert all(t.answer and not t.answer.startswith("$") for t in ob)
    qwen, drops = read(f"qwen_cot:{shared_data}/corpora/qwen_math_cot_100.jsonl")
    assert len(qwen) == 96 and {d.reason for d in drops} == {"no_correct_response"}
    assert qwen[0].id == "qwen_cot/0" and qwen[0].answer == "420"
    several, _ = read(f"qwen_cot:{shared_data}/corpora/qwen_math_cot_100.jsonl:limit=2,solutions=3,name=q")
    assert [t.id for t in several][:3] == ["q/0#0", "q/0#1", "q/0#2"]
    assert {problem_origin(t.id) for t in several} == {"q/0", "q/1"}


def test_corpora_folder_expands_to_every_known_file(shared_data):
    specs = expand_specs([parse_source(f"corpora:{shared_data}/corpora")])
    assert [s.preset for s in specs] == ["gsm8k", "olympiadbench", "qwen_cot", "proofnet", "proofnet", "minif2f"]
    assert specs[3].name == "proofnet_test"


def test_hub_rows_normalize_from_hand_made_rows():
    spec = parse_source("deepmath:solutions=2")
    row = {
        "question": "Compute $1+1$.", "final_answer": "2", "difficulty": 1.0, "topic": "Arithmetic",
        "r1_solution_1": "Okay, let me think... 1+1 is 2.\n</think>\n\nWe have $1+1=2$. The answer is $\\boxed{2}$.",
        "r1_solution_2": "Adding gives $1+1=2$.", "r1_solution_3": None,
    }
    a, b = normalize_deepmath(row, 7, spec)
    assert (a.id, b.id) == ("deepmath/7#0", "deepmath/7#1")
    assert a.solution == "We have $1+1=2$. The answer is $\\boxed{2}$." and a.answer == "2" and a.kind == "computation"
    thm = {"id": 11, "informal_theorem": "Prove that $2>1$.", "proof": "Since $2-1=1>0$, we get $2>1$.", "truth_value": True}
    [t] = normalize_deeptheorem(thm, 0, parse_source("deeptheorem"))
    assert (t.id, t.kind, t.problem) == ("deeptheorem/11", "proof", "Prove that $2>1$.")
    [d] = normalize_deeptheorem({"id": 12, "informal_theorem": "x"}, 1, parse_source("deeptheorem"))
    assert (d.reason, d.detail) == ("missing_field", "proof")


def test_mapped_jsonl_and_parquet_files(tmp_path):
    rows = [{"q": f"What is {k}+{k}?", "a": f"We get {k}+{k} = {2 * k}.", "final": str(2 * k), "uid": f"u{k}"} for k in range(5)]
    jsonl = tmp_path / "mine.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    trajs, _ = read(f"{jsonl}:problem=q,solution=a,answer=final,id=uid,kind=computation")
    assert [t.id for t in trajs] == [f"mine/u{k}" for k in range(5)]
    assert trajs[3].answer == "6" and trajs[3].problem == "What is 3+3?"
    parquet = tmp_path / "proofs.parquet"
    Dataset.from_list([{"statement": "Show $a=a$.", "proof": "\\begin{proof}By reflexivity $a=a$.\\end{proof}"}]).to_parquet(parquet)
    [p], _ = read(f"{parquet}:problem=statement,solution=proof,kind=proof,format=proofnet,name=mine")
    assert (p.source, p.kind, p.solution) == ("mine", "proof", "By reflexivity $a=a$.")
    gsm = tmp_path / "g.jsonl"
    gsm.write_text(json.dumps({"question": "q?", "answer": "2*3 = <<2*3=6>>6\n#### 6"}) + "\n")
    [g], _ = read(f"{gsm}:problem=question,solution=answer,format=gsm8k")
    assert (g.solution, g.answer) == ("2*3 = 6", "6")


def test_malformed_rows_are_counted_drops_and_good_rows_survive(tmp_path):
    lines = [
        json.dumps({"problem": "ok?", "solution": "fine $x=1$."}),
        json.dumps({"problem": "no solution"}),
        json.dumps({"problem": 42, "solution": "s"}),
        json.dumps({"problem": "p", "solution": ["a", "list"]}),
        json.dumps({"problem": "   ", "solution": "s"}),
        json.dumps({"problem": "p", "solution": "x" * (MAX_SOLUTION_CHARS + 1)}),
        json.dumps({"problem": "p", "solution": "s", "answer": {"a": 1}}),
        json.dumps({"problem": "p", "solution": "s", "kind": "poem"}),
        "{not json",
        json.dumps(["a", "list"]),
        "",
        json.dumps({"problem": "also ok?", "solution": "yes $y=2$.", "answer": 2}),
    ]
    path = tmp_path / "messy.jsonl"
    path.write_text("\n".join(lines) + "\n")
    trajs, drops = read(f"{path}:kind=kind")
    assert [t.problem for t in trajs] == []  # kind=kind reads a field most rows lack -> bad_kind
    trajs, drops = read(f"{path}:problem=problem,solution=solution")
    assert [t.problem for t in trajs] == ["ok?", "p", "also ok?"]  # the "poem" kind is not read here
    assert trajs[2].answer == "2"
    assert sorted(d.reason for d in drops) == sorted(
        ["missing_field", "bad_type", "bad_type", "empty_field", "too_long", "bad_type", "bad_json", "bad_json"]
    )


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(SourceError, match="not found"):
        list(iter_source(parse_source(f"{tmp_path}/absent.jsonl")))


def test_r1_reasoning_is_dropped_but_a_trace_that_is_all_reasoning_is_kept():
    from mrtasks.curate.sources import strip_reasoning

    assert strip_reasoning("<think>try 3? no, 4.</think>\nSo $x=4$.") == "So $x=4$."
    assert strip_reasoning("scratch work\n</think>\n\nClean: $x=4$.") == "Clean: $x=4$."
    assert strip_reasoning("<think>only scratch work</think>") == "<think>only scratch work</think>"


# --- bytes are never silently changed (issue 10) ---------------------------------------------------

GOOD = {"problem": "Show $1<2$.", "solution": "We have $2-1=1$, so $1<2$."}


def test_invalid_utf8_jsonl_lines_are_bad_encoding_drops(tmp_path):
    src = tmp_path / "mixed.jsonl"
    bad = json.dumps({"problem": "Show caf\u00e9.", "solution": "It is caf\u00e9."}).encode().replace(b"\\u00e9", b"\xe9")
    src.write_bytes(json.dumps(GOOD).encode() + b"\n" + bad + b"\n" + json.dumps({**GOOD, "problem": "p\udcff"}).encode() + b"\n")
    kept, drops = read(f"{src}:kind=proof")
    assert [t.problem for t in kept] == [GOOD["problem"]]
    assert [d.reason for d in drops] == ["bad_encoding", "bad_encoding"]  # a raw 0xE9 byte; a \udcff escape
    assert drops[0].id == "mixed.jsonl:2"


def test_invalid_utf8_in_a_json_array_drops_that_row_only(tmp_path):
    src = tmp_path / "rows.json"
    text = json.dumps([GOOD, {"problem": "Q MARK", "solution": "x"}]).encode().replace(b"MARK", b"\xff\xfe")
    src.write_bytes(text)
    kept, drops = read(f"{src}:kind=proof")
    assert [t.problem for t in kept] == [GOOD["problem"]] and [d.reason for d in drops] == ["bad_encoding"]


def test_invalid_utf8_in_a_parquet_string_column_drops_that_row_only(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    raw = pa.array([GOOD["problem"].encode(), b"bad \xff\xfe problem", b"Show $2<3$."], type=pa.binary())
    problems = pa.Array.from_buffers(pa.string(), len(raw), raw.buffers())  # a string column, unvalidated
    pq.write_table(pa.table({"problem": problems, "solution": [GOOD["solution"]] * 3}), tmp_path / "t.parquet")

    kept, drops = read(f"{tmp_path / 't.parquet'}:kind=proof")

    assert [t.problem for t in kept] == [GOOD["problem"], "Show $2<3$."]
    assert [(d.id, d.reason) for d in drops] == [("t.parquet:1", "bad_encoding")]


@pytest.mark.parametrize("content", [b"", b"PAR1" + b"x" * 100 + b"PAR1", b"not parquet at all"], ids=["0-byte", "corrupt", "text"])
def test_unreadable_parquet_is_one_source_error(tmp_path, content):
    (tmp_path / "s.parquet").write_bytes(content)
    with pytest.raises(SourceError, match="is not a readable Parquet file"):
        read(f"{tmp_path / 's.parquet'}:kind=proof")


def test_bad_encoding_is_counted_in_the_build_and_corrupt_parquet_is_one_line(tmp_path, capsys, monkeypatch):
    from mrtasks.build import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    src = tmp_path / "s.jsonl"
    src.write_bytes(b'{"problem": "caf\xe9", "solution": "x"}\n')
    assert main(["--out", str(tmp_path / "o"), "--no-progress", "--source", "sample", "--source", f"{src}:kind=proof"]) == 0
    stats = json.loads((tmp_path / "o" / "build_stats.json").read_text())
    assert stats["drops"]["source"]["bad_encoding"] == 1

    before = {p.name: p.read_bytes() for p in (tmp_path / "o").iterdir() if p.is_file()}
    (tmp_path / "empty.parquet").write_bytes(b"")
    code = main(["--out", str(tmp_path / "o"), "--no-progress", "--source", f"{tmp_path / 'empty.parquet'}:kind=proof"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("error: ") and "empty.parquet is not a readable Parquet file" in err[-1]
    assert "Traceback" not in "\n".join(err)
    assert {p.name: p.read_bytes() for p in (tmp_path / "o").iterdir() if p.is_file()} == before


# --- the preset registry (mrtasks.curate.presets) ------------------------------------------------


def test_presets_are_registered_and_a_new_one_is_one_call(tmp_path):
    from mrtasks.curate import presets

    assert presets.list_presets("hub") == ["deepmath", "deeptheorem"]
    assert presets.get_preset("deepmath").revision == DEEPMATH_REVISION
    assert {"gsm8k", "olympiadbench", "qwen_cot", "proofnet", "minif2f"} <= set(presets.list_presets("file"))
    with pytest.raises(ValueError, match="pinned revision"):
        presets.register_preset(presets.Preset("unpinned", presets.normalize_sample, "hub", "org/data"))

    def normalize_qa(row, i, spec):
        return [presets.make_trajectory(f"{spec.name}/{i}", spec.name, "computation", row.get("q"), row.get("a"), row.get("n"))]

    src = tmp_path / "qa.jsonl"
    src.write_text(json.dumps({"q": "What is $1+1$?", "a": "We get $1+1=2$.", "n": 2}) + "\n")
    presets.register_preset(presets.Preset("qa", normalize_qa))
    try:
        kept, drops = read(f"qa:{src}")
    finally:
        presets.PRESET_REGISTRY.pop("qa")
        presets.PRESETS.pop("qa")

    assert [(t.id, t.answer, t.source) for t in kept] == [("qa/0", "2", "qa")] and drops == []


def test_a_hub_source_offline_is_one_line_exit_2(tmp_path):
    import os
    import subprocess
    import sys

    from tests.conftest import REPO_ROOT

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}  # nothing cached
    proc = subprocess.run([sys.executable, "-m", "mrtasks.build", "--out", str(tmp_path / "o"), "--no-progress",
                           "--source", "deepmath:limit=5"], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("error: cannot load zwhe99/DeepMath-103K at ") and "from the Hub: " in line
    assert "Traceback" not in proc.stderr and not (tmp_path / "o").exists()


@pytest.mark.parametrize(("spec", "words"), [
    ("sample:limt=5", "unknown option 'limt' (did you mean limit?)"),
    ("data.jsonl:problme=question", "unknown option 'problme' (did you mean problem?)"),
    ("gsm8k:data.jsonl:problem=question", "unknown option 'problem'"),  # a preset knows its fields
    ("deepmath:revison=abc", "unknown option 'revison' (did you mean revision?)"),
    ("sample:name=a|b", "name='a|b' must be non-empty, without '|'"),
    ("sample:name=a\nb", "without '|' or control characters"),
])
def test_unknown_source_options_and_unsafe_names_are_refused(spec, words):
    with pytest.raises(SourceError) as err:
        parse_source(spec)
    assert words in str(err.value) and "\n" not in str(err.value).replace("a\nb", "")


def test_every_documented_option_is_accepted_and_licenses_are_known():
    spec = parse_source("data.jsonl:problem=q,solution=s,answer=a,id=i,kind=proof,format=think,name=x,limit=3,"
                        "solutions=2,license=cc-by-4.0")
    assert (spec.license, spec.limit, spec.solutions, spec.name) == ("cc-by-4.0", 3, 2, "x")
    assert parse_source("deepmath:revision=abc,limit=2").revision == "abc"
    assert parse_source("gsm8k:f.jsonl").license == "mit" and parse_source("sample").license == "apache-2.0"
    assert parse_source("deeptheorem").license is None  # not known: the card says so
    assert parse_source("f.jsonl").license is None


def test_a_0_byte_jsonl_source_is_one_source_error(tmp_path):
    (tmp_path / "e.jsonl").write_bytes(b"")
    with pytest.raises(SourceError, match="empty \\(0 bytes\\)"):
        list(iter_source(parse_source(str(tmp_path / "e.jsonl"))))
