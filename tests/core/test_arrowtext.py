"""Text columns held by Arrow, read from their bytes: the answers equal those the values give.

Brute force on random columns of messy values (spaces of every kind at either end, characters beyond ASCII,
empty and missing values), cut into random chunks and slices, as ``string`` and ``large_string``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from synthdp.core.arrowtext import arrow_text, may_strip
from synthdp.files.sources import strip_text

#: Pieces of values: printable ASCII, the ASCII characters str.isspace counts, spaces beyond ASCII, other
#: characters beyond ASCII, control characters that are not spaces.
PIECES = ["a", "Z", "1", "-", "~", "!", " ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0",
          "\u2003", "\u3000", "é", "名", "\x01", "\x7f"]


def _value(rng: np.random.Generator) -> str | None:
    if rng.random() < 0.1:
        return None
    return "".join(rng.choice(PIECES, size=int(rng.integers(0, 4))))


def _chunked(values: list[str | None], rng: np.random.Generator) -> pa.ChunkedArray:
    """``values`` as Arrow strings in random chunks, some of them slices of a longer array (offsets not from 0)."""
    kind = pa.large_string() if rng.random() < 0.5 else pa.string()
    chunks, start = [], 0
    while start < len(values):
        stop = start + int(rng.integers(1, len(values) - start + 1))
        pad = int(rng.integers(0, 3))
        padded = pa.array(["x "] * pad + values[start:stop] + [" y"] * pad, kind)
        chunks.append(padded.slice(pad, stop - start))
        start = stop
    return pa.chunked_array(chunks, kind)


def _printable_edges(value: str) -> bool:
    return not value or (0x21 <= ord(value[0]) <= 0x7E and 0x21 <= ord(value[-1]) <= 0x7E)


def test_may_strip_says_false_exactly_when_every_value_has_printable_ascii_ends():
    """``False`` never misses a value that ``str.strip`` changes, and is said whenever every value begins and ends
    with printable ASCII (so a column of such values is never looked at value by value)."""
    rng = np.random.default_rng(0)
    said = 0
    for _ in range(3000):
        values = [_value(rng) for _ in range(int(rng.integers(1, 7)))]
        if rng.random() < 0.5:  # many columns with clean ends, so that both answers are tested
            values = [v if v is None or _printable_edges(v) else v.strip(" \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u2003\u3000"
                                                                             "é名\x01\x7f") for v in values]
        text = _chunked(values, rng)
        strips = any(v is not None and v.strip() != v for v in values)
        clean = all(v is None or _printable_edges(v) for v in values)
        answer = may_strip(text)
        assert answer or not strips, repr(values)
        assert answer != clean, repr(values)
        said += not answer
    assert 500 < said < 2500


def test_may_strip_reads_empty_and_missing_columns():
    for values in ([], [None], [""], ["", None, ""]):
        assert may_strip(pa.chunked_array([pa.array(values, pa.large_string())], pa.large_string())) is False
    assert may_strip(pa.chunked_array([], pa.large_string())) is False
    assert may_strip(pa.chunked_array([pa.array([" a"], pa.string_view())])) is True  # not read: asks the values


def test_arrow_text_only_for_text_held_by_arrow():
    held = pd.Series(["a", None], dtype=pd.StringDtype("pyarrow"))
    assert arrow_text(held).to_pylist() == ["a", None]
    assert arrow_text(pd.Series(["a", None], dtype=object)) is None
    assert arrow_text(pd.Series(["a", None], dtype=pd.StringDtype("python"))) is None
    assert arrow_text(pd.Series([1, 2])) is None


@pytest.mark.parametrize("seed", range(3))
def test_strip_text_strips_as_str_strip_does(seed):
    """Brute force: random frames of Arrow-held, Python-held and numeric columns come back with every text value
    stripped (missing values kept), and the changed columns named; a frame that needs nothing is returned as is."""
    rng = np.random.default_rng(seed)
    for _ in range(150):
        rows = int(rng.integers(1, 9))
        columns = {f"c{j}": [_value(rng) for _ in range(rows)] for j in range(4)}
        if rng.random() < 0.5:
            columns = {name: [v if v is None else v.strip() for v in values] for name, values in columns.items()}
            columns["c0"][0] = rng.choice(["x ", "\xa0x", "x", None])
        frame = pd.DataFrame({
            "c0": pd.Series(columns["c0"], dtype=pd.StringDtype("pyarrow")),
            "c1": pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array(  # two chunks
                [pa.array(part, pa.large_string()) for part in np.array_split(columns["c1"], [rows // 2])]))),
            "c2": pd.Series(columns["c2"], dtype=object),
            "c3": pd.Series(columns["c3"], dtype="str"),
            "n": pd.Series(np.arange(rows)),
        })
        stripped, changed = strip_text(frame)
        expected = frame.copy()
        for name in ("c0", "c1", "c2", "c3"):
            expected[name] = frame[name].map(str.strip, na_action="ignore").astype(frame[name].dtype)
        pd.testing.assert_frame_equal(stripped, expected, check_exact=True)
        assert changed == [c for c in ("c0", "c1", "c2", "c3") if not frame[c].equals(expected[c])]
        assert (stripped is frame) == (not changed)
