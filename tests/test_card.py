"""The dataset card: Hub metadata that `huggingface_hub` parses, filled with the build's figures."""

from __future__ import annotations

import json

import pytest
import yaml
from huggingface_hub import DatasetCard

from mrtasks.build import main
from mrtasks.curate.card import size_category
from mrtasks.tasks import list_tasks


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("card_demo")
    assert main(["--out", str(out), "--no-progress"]) == 0
    return out, json.loads((out / "build_stats.json").read_text())


def test_card_metadata_parses_and_maps_every_config_to_its_files(demo):
    out, stats = demo
    card = DatasetCard.load(out / "README.md")
    data = card.data.to_dict()
    assert data["license"] == "apache-2.0"
    assert data["task_categories"] == ["text-generation", "reinforcement-learning"]
    assert data["size_categories"] == ["n<1K"] and "math" in data["tags"]
    configs = {c["config_name"]: c["data_files"] for c in data["configs"]}
    assert list(configs) == [*list_tasks(), "trajectories"] and "error_correction" in configs
    for name, files in configs.items():
        for entry in files:
            assert list(out.glob(entry["path"])), entry
        assert [e["split"] for e in files] == [s for s in ("train", "validation") if stats["counts"][name][s]]


def test_card_body_reports_the_build(demo):
    out, stats = demo
    text = (out / "README.md").read_text()
    assert stats["fingerprint"] in text
    assert all(f"| `{name}` | " in text for name in list_tasks())  # the task table comes from the registry
    assert f"| masked_then_fill | {stats['counts']['masked_then_fill']['train']} |" in text
    assert "| outcome | not_computation | 18 |" in text  # the sample's 18 proofs have no outcome row
    assert "`sha256:" in text and "load_dataset(" in text and 'get_reward("process")' in text
    params = json.loads(text.split("```json\n", 1)[1].split("\n```", 1)[0])
    assert params["seed"] == 0 and params["tasks"]["masked_then_fill"]["min_formulas"] == 7 and params["annotator"] == "heuristic"
    assert yaml.safe_load(text.split("---")[1])["pretty_name"] == "mr-rlvr tasks"


def test_size_categories_follow_the_hub_buckets():
    assert [size_category(n) for n in (0, 999, 1000, 25_000, 150_000)] == ["n<1K", "n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M"]


def test_a_template_the_build_cannot_fill_is_refused_before_any_work(tmp_path, capsys):
    template = tmp_path / "t.md"
    for text, words in (("---\n{{metadata}}\n---\n{{typo}}\n", "unknown placeholder {{typo}}"),
                        ("---\n{{metadata}}\n---\n{{ repo }}\n", "unknown placeholder {{ repo }}"),
                        ("# no header\n{{metadata}}\n", "no {{metadata}} in a leading --- header"),
                        ("", "no {{metadata}}")):
        template.write_text(text)
        assert main(["--out", str(tmp_path / "o"), "--no-progress", "--card-template", str(template)]) == 2
        assert words in capsys.readouterr().err and not (tmp_path / "o").exists(), text
    template.write_bytes(b"\xff\xfe---")
    assert main(["--out", str(tmp_path / "o"), "--no-progress", "--card-template", str(template)]) == 2
    assert "cannot be read as UTF-8" in capsys.readouterr().err


def test_card_and_stats_report_curation_quality(demo):
    out, stats = demo
    q = stats["quality"]
    assert q["masked_then_fill"]["all"]["junk_masks"] == 0 and q["masked_then_fill"]["all"]["rows_with_visible_boxed_answer"] == 0
    assert q["answer_from_box"] == 0  # the sample maps its answers
    text = (out / "README.md").read_text()
    assert "### Curation quality" in text and "surface-cue baseline" in text
    rows = q["masked_then_fill"]["sample"]["rows"]
    f = q["masked_then_fill"]["sample"]
    assert f["distinct_masks_per_row"] == 7.0 and f["masks_per_row"] >= 7.0 and f["bookkeeping_masks"] == 0
    assert f"| sample | {rows} | {f['masks_per_row']} | 7.0 | 0 | 0 |" in text


def test_card_documents_every_column_of_every_config(demo):
    from mrtasks.curate.card import config_features
    from mrtasks.curate.pipeline import CONFIGS

    out, _ = demo
    text = (out / "README.md").read_text()
    section = text.split("## Columns\n", 1)[1].split("\n## ", 1)[0]
    for config in CONFIGS:
        table = section.split(f"**`{config}`**", 1)[1].split("**`", 1)[0]
        for column in config_features(config):
            line = next(ln for ln in table.splitlines() if ln.startswith(f"| `{column}` |"))
            assert len(line.split(" | ")[2]) > 20, (config, column)  # a real description, not a placeholder
    assert "`-1` when no step was changed" in section and "`steps[i] == shuffled_steps[order[i]]`" in section
    assert "the paper's h" in section and "| `masks` | `list[string]` |" in section
    assert "| `prompt` | `list[{role: string, content: string}]` |" in section


def test_the_first_config_is_the_default_and_loads_without_a_name(demo):
    from datasets import load_dataset

    out, _ = demo
    configs = DatasetCard.load(out / "README.md").data.to_dict()["configs"]
    assert [c.get("default", False) for c in configs] == [True] + [False] * (len(configs) - 1)
    assert configs[0]["config_name"] == "masked_then_fill"
    ds = load_dataset(str(out), split="train")
    assert "masks" in ds.column_names and set(ds["task"]) == {"masked_then_fill"}


def test_license_column_matches_the_yaml_header(demo):
    from mrtasks.curate.card import license_metadata

    out, _ = demo
    text = (out / "README.md").read_text()
    [row] = [ln for ln in text.splitlines() if ln.startswith("| sample | sample | `sha256:")]
    assert row.split(" | ")[3] == "apache-2.0"
    assert "`license: apache-2.0`: the licenses of the sources above" in text
    corpora = [{"name": n, "license": lic} for n, lic in (("gsm8k", "mit"), ("olympiadbench", "apache-2.0"), ("p", "mit"))]
    assert license_metadata(corpora) == {"license": ["apache-2.0", "mit"]}
    unknown = license_metadata([*corpora, {"name": "mine", "license": None}])
    assert unknown["license"] == "other" and unknown["license_name"] == "per-source"


def test_card_has_limitations_and_a_citation(demo):
    out, _ = demo
    text = (out / "README.md").read_text()
    assert "## Limitations" in text and "Decontamination" in text
    bib = text.split("```bibtex\n", 1)[1].split("```", 1)[0]
    assert "arXiv:2511.17473" in bib and "Wang, Zhen" in bib


def test_table_cells_cannot_break_the_card():
    from mrtasks.curate.card import _table

    table = _table(["source", "rows"], [["a|b\nc", 3]])
    assert table.splitlines()[-1] == "| a\\|b c | 3 |"
