import pytest

from mrtasks.jsonl import BadLine, JSONLError, iter_jsonl, read_jsonl, write_jsonl


@pytest.fixture
def messy(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"a": 1}\n\n{"a": \n[1, 2]\n{"a": "\xff"}\n{"a": "\xc3\xa9"}\n')
    return path


def test_bad_lines_are_raised_with_their_line_number(messy):
    with pytest.raises(JSONLError, match=r"rows.jsonl:3: not a JSON object"):
        read_jsonl(messy)


def test_bad_lines_can_be_counted_or_skipped(messy):
    items = list(iter_jsonl(messy, errors="yield"))
    assert [n for n, _ in items] == [1, 3, 4, 5, 6]
    bad = [item.reason for _, item in items if isinstance(item, BadLine)]
    assert bad == ["bad_json", "bad_json", "bad_encoding"]  # invalid UTF-8 is never turned into U+FFFD
    assert [row for _, row in iter_jsonl(messy, errors="skip")] == [{"a": 1}, {"a": "é"}]


def test_write_then_read_round_trips_unicode(tmp_path):
    rows = [{"x": "∑ é"}, {"y": [1, None]}]
    write_jsonl(tmp_path / "out.jsonl", rows)
    assert read_jsonl(tmp_path / "out.jsonl") == rows


def test_a_byte_order_mark_before_the_first_line_is_not_part_of_it(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"problem": "1+1?"}\n{"problem": "2+2?"}\n')
    assert read_jsonl(path) == [{"problem": "1+1?"}, {"problem": "2+2?"}]
