"""`python -m mrtasks.curate.screen`: a build's masks in context, the same rows before and after a change."""

from __future__ import annotations

import json

import pytest

from mrtasks.build import main as build_main
from mrtasks.curate.heuristic.context import bookkeeping_cue
from mrtasks.curate.screen import EXIT_OK, EXIT_USAGE, load_rows, main, sample_rows, screen_lines


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    out = tmp_path_factory.mktemp("screen") / "tasks"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("HF_DATASETS_OFFLINE", "1")
        assert build_main(["--out", str(out), "--no-progress"]) == 0
    return out


def test_each_mask_is_shown_verbatim_inside_its_solution(build):
    rows = load_rows(build)
    assert [r["id"] for r in rows] == sorted(r["id"] for r in rows)
    sample = sample_rows(rows, 3, seed=20)
    lines = list(screen_lines(sample, context=10))
    shown = [line for line in lines if line.startswith("  #")]
    assert len(shown) == sum(len(r["masks"]) for r in sample) and sum(line.startswith("===") for line in lines) == 3
    masks = [m for r in sample for m in r["masks"]]
    assert [line.split("⟦", 1)[1].rsplit("⟧", 1)[0] for line in shown] == masks


def test_the_same_ids_give_the_same_rows_and_a_seed_gives_the_same_sample(build, tmp_path, capsys):
    ids = tmp_path / "ids.json"
    assert main([str(build), "--rows", "4", "--save-ids", str(ids)]) == EXIT_OK
    first = capsys.readouterr().out
    saved = json.loads(ids.read_text())
    assert len(saved) == 4 and main([str(build), "--ids", str(ids)]) == EXIT_OK
    assert capsys.readouterr().out == first
    rows = load_rows(build)
    assert [r["id"] for r in sample_rows(rows, 3, seed=20)] != [r["id"] for r in sample_rows(rows, 3, seed=21)]
    assert sample_rows(load_rows(build), 4, seed=20, ids=[saved[1], "gone", saved[0]])[0]["id"] == saved[1]


def test_cues_keep_masks_after_bookkeeping_words_or_with_residue():
    sol = "Let $a = 2$. So $b = 3$ and $c & = 4$."
    assert bookkeeping_cue(sol, sol.index("a = 2"), sol.index("a = 2") + 5)
    assert not bookkeeping_cue(sol, sol.index("b = 3"), sol.index("b = 3") + 5)
    assert bookkeeping_cue(sol, sol.index("c & = 4"), sol.index("c & = 4") + 7)


def test_bad_input_is_a_clear_error(build, tmp_path, capsys):
    assert main([str(tmp_path / "missing")]) == EXIT_USAGE
    bad = tmp_path / "ids.json"
    bad.write_text('{"not": "a list"}')
    assert main([str(build), "--ids", str(bad)]) == EXIT_USAGE
    assert "error:" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0


def test_save_ids_never_overwrites_a_build_or_a_users_file(build, tmp_path, capsys):
    stats = (build / "build_stats.json").read_text()
    (tmp_path / "mine.json").write_text('{"my": "notes"}')
    for target, words in ((build / "build_stats.json", "a dataset build"), (tmp_path / "mine.json", "was not written by"),
                          (tmp_path, "is a folder")):
        assert main([str(build), "--rows", "1", "--save-ids", str(target)]) == 4
        assert words in capsys.readouterr().err
    assert (build / "build_stats.json").read_text() == stats and (tmp_path / "mine.json").read_text() == '{"my": "notes"}'


def test_labels_remeasure_a_read_screen_on_a_new_build(build, tmp_path, capsys):
    from mrtasks.curate.quality import mask_spans
    from mrtasks.curate.screen import label_figures, read_labels

    row = load_rows(build)[0]
    spans = sorted(set(mask_spans(row)))
    assert len(spans) >= 3
    (a, b), rest = spans[0], spans[2:]  # spans[1] stays unlabelled: a mask that is new since the labels
    lines = [{"id": row["id"], "start": a, "end": b, "kind": 3}]
    lines += [{"id": row["id"], "start": s, "end": e, "kind": 0} for s, e in rest]
    lines += [{"id": row["id"], "start": 0, "end": 1, "kind": 0},  # a real formula the build no longer masks
              {"id": "gone/1", "start": 0, "end": 5, "kind": 2}]  # a row the build no longer has
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(x) + "\n" for x in lines))
    f = label_figures(load_rows(build), read_labels(labels))
    assert (f["rows"], f["rows_gone"], f["masks"]) == (2, 1, len(lines))
    assert (f["bookkeeping"], f["bookkeeping_masked"], f["bookkeeping_unmasked_in_kept_rows"]) == (2, 1, 0)
    assert (f["real"], f["real_unmasked_in_kept_rows"], f["unlabelled_masks"]) == (len(rest) + 1, 1, 1)
    assert main([str(build), "--labels", str(labels)]) == EXIT_OK
    assert "bookkeeping (kinds 1-6): 2 labelled, 1 still masked" in capsys.readouterr().out
    for bad in ('{"id": "x", "start": 3, "end": 1, "kind": 0}', '{"id": "x", "start": 1, "end": 3, "kind": true}',
                '{"id": "x", "start": 1.5, "end": 3, "kind": 0}', '{"id": "x", "start": 1, "end": 3}'):
        labels.write_text(bad + "\n")
        assert main([str(build), "--labels", str(labels)]) == EXIT_USAGE
        assert "line 1" in capsys.readouterr().err
