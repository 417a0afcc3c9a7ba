"""The two CSV readers give one frame: pyarrow's where it vouches for its reading, pandas' otherwise.

docs/privacy.md §10.1 ("Two CSV readers, one frame"). Each file of a corpus of
awkward CSVs is read by :func:`synthdp.files.csvfile.read_csv` with the fast
reader and with it switched off: the frames (text values, missing values,
column names, dtypes) or the errors (type and message, row numbers included)
must be equal, and the corpus says which files the fast reader must take, so
that no case compares pandas with itself.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv
import pytest

import synthdp.files.arrowcsv as arrowcsv
import synthdp.files.csvfile as csvfile
from synthdp.core.errors import InputError
from synthdp.files.arrowcsv import read_text
from synthdp.files.csvfile import read_csv

ADULT = ["age", "workclass", "fnlwgt", "income"]

#: (name, file bytes, read_csv options, whether the fast reader must take the file)
CORPUS = [
    ("adult rows: ', ' and ' ?'", b"39, State-gov, 77516, <=50K\n50, ?, 83311, >50K\n38, Private, ?, <=50K\n",
     dict(missing=["?"], columns=ADULT), True),
    ("header with leading spaces", b"a, b, c\n1, x, NA\n2, , z\n", {}, True),
    ("quoted fields at the start of a field", b'name,city\n"Smith, John",Paris\n"Lee",""\n', {}, True),
    ("', ' before a quoted field", b'id,name\n1, "Smith, John"\n2, "Lee, Ann"\n', {}, False),
    ("doubled quote inside quotes", b'a,b\n"O""Brien",1\nx,2\n', {}, False),
    ("quoted line end", b'a,b\n"line one\nline two",x\n"p",q\n', {}, True),
    ("quoted CRLF line end", b'a,b\r\n"line one\r\nline two",x\r\np,q\r\n', {}, True),
    ("quoted leading space kept", b'a,b\n" x",1\ny,2\n', {}, False),
    ("a quote left open, the first byte a quote", b'"a",b\n1,"2\n', {}, False),
    ("BOM", b"\xef\xbb\xbfa,b\n1,2\n", {}, True),
    ("BOM and skipped line", b"\xef\xbb\xbftitle\na,b\n1,2\n", dict(skip_rows=1), True),
    ("CRLF", b"a,b\r\n1, x\r\n2,\r\n", {}, True),
    ("lone CR", b"a,b\r1,2\r3,4\r", {}, True),
    ("empty fields", b"a,b,c\n,,\n1,,3\n", {}, True),
    ("pandas' missing markers", b"a,b,c\nNA,null,N/A\nNaN,None,-nan\nx,#N/A,<NA>\n", {}, True),
    ("quoted missing markers", b'a,b\n"NA",""\nx,y\n', {}, True),
    ("a token after spaces", b"a,b\n1,   ?\n2,  x\n3,?\n", dict(missing=["?"]), True),
    ("a numeric token's variants", b"a,b\n-1,x\n-1.0,y\n-1.5,z\n", dict(missing=["-1"]), True),
    ("leading zeros", b"id,v\n001,007\n0002,1.50\n1e3,-0\n", {}, True),
    ("trailing spaces kept", b"a,b\nx ,y \n", {}, True),
    ("text after a closing quote", b'x,y\n"a"b,c\nd,e\n', {}, True),
    ("ragged: a short row", b"a,b,c\n1,2,3\n4,5\n", {}, False),
    ("ragged: a long row", b"a,b\n1,2\n3,4\n5,6,7\n", {}, False),
    ("blank lines", b"a,b\n\n1,2\n\n\n3,4\n", {}, True),
    ("a line of spaces", b"a,b\n1,2\n   \n3,4\n", {}, False),
    ("skipped lines", b"A title\nA notice, with a comma\na,b\n1,2\n", dict(skip_rows=2), True),
    ("a blank skipped line", b"title\n\na,b\n1,2\n", dict(skip_rows=2), True),
    ("a skipped line with a quote", b'"title\nstill title"\na,b\n1,2\n', dict(skip_rows=1), False),
    ("skipped quoted rows", b'"t\nx,q",1\n"y",2\na,b\n1,2\n', dict(skip_rows=2), False),
    ("one column", b"a\n1\n \n2\n", {}, False),
    ("a header name that is a missing marker", b"a,NA\n1,2\n", {}, False),
    ("an empty header name", b"a,,c\n1,2,3\n", {}, False),
    ("a repeated header name", b"a,a\n1,2\n", {}, False),
    ("a header of numbers", b"2019,2020\n1,2\n", {}, True),
    ("header only", b"a,b\n", {}, False),
    ("empty file", b"", {}, False),
    ("not UTF-8", b"a,b\ncaf\xe9,1\n", {}, False),
    ("latin-1 declared", b"a,b\ncaf\xe9,1\n", dict(encoding="latin-1"), False),
    ("UTF-8 bytes declared latin-1", "a,b\ncafé,1\n".encode(), dict(encoding="latin-1"), False),
    ("UTF-8 text", "名前,v\nü, é\n".encode(), {}, True),
    ("tab separated", b"a\tb\n x\t y\n", dict(sep="\t"), True),
    ("semicolons read with commas", b"a;b\n1;2\n", {}, False),
    ("columns named, no header", b"1,x\n2,y\n", dict(columns=["n", "t"]), True),
    ("too few names", b"1,x\n2,y\n", dict(columns=["n"]), True),
]


def _read(path, options, fast: bool, monkeypatch) -> tuple[object, bool]:
    """``read_csv``'s frame or error, and whether the fast reader gave the frame."""
    taken = []

    def spy(*args, **kwargs):
        df = read_text(*args, **kwargs) if fast else None
        taken.append(df is not None)
        return df

    with monkeypatch.context() as patch:
        patch.setattr(csvfile, "read_text", spy)
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            try:
                return read_csv(path, **options), any(taken)
            except InputError as exc:
                return exc, any(taken)


@pytest.mark.parametrize("name,data,options,fast", CORPUS, ids=[c[0] for c in CORPUS])
def test_fast_reader_and_pandas_give_one_frame(tmp_path, monkeypatch, name, data, options, fast):
    path = tmp_path / "table.csv"
    path.write_bytes(data)
    got, taken = _read(path, options, True, monkeypatch)
    expected, _ = _read(path, options, False, monkeypatch)
    assert taken == fast
    if isinstance(expected, Exception):
        assert type(got) is type(expected) and str(got) == str(expected)
    else:
        pd.testing.assert_frame_equal(got, expected, check_exact=True)
        assert got.attrs == expected.attrs


def test_a_bad_row_is_named_by_its_line_on_either_path(tmp_path, monkeypatch):
    path = tmp_path / "table.csv"
    path.write_bytes(b"a,b\n1,2\n3,4\n5,6,7\n")
    got, taken = _read(path, {}, True, monkeypatch)
    assert not taken and isinstance(got, InputError) and "line 4" in str(got)


def test_pyarrow_alone_misreads_what_is_left_to_pandas(tmp_path):
    """``', "Smith, John"'``: pyarrow opens no quote after the space, splits at the comma and, with a header of
    three names, reads rows of three fields without an error; pandas reads two fields and a missing third."""
    path = tmp_path / "table.csv"
    path.write_bytes(b'id,name,extra\n1, "Smith, John"\n2, "Lee, Ann"\n')
    alone = pyarrow.csv.read_csv(path).to_pydict()
    assert alone["name"] == [' "Smith', ' "Lee'] and alone["extra"] == [' John"', ' Ann"']
    assert read_text(path, header=True) is None
    df = read_csv(path)
    assert df["name"].tolist() == ["Smith, John", "Lee, Ann"] and df["extra"].isna().all()


def test_without_pyarrow_pandas_reads(tmp_path, monkeypatch):
    path = tmp_path / "table.csv"
    path.write_bytes(b"a, b\n001, ?\n2, x\n")
    fast = read_csv(path, missing=["?"])
    assert read_text(path, header=True, missing=["?"]) is not None
    monkeypatch.setattr(arrowcsv, "_pyarrow", lambda: None)
    assert read_text(path, header=True, missing=["?"]) is None
    pd.testing.assert_frame_equal(read_csv(path, missing=["?"]), fast)
    assert fast["a"].tolist() == ["001", "2"] and fast["b"].isna().tolist() == [True, False]


def _random_file(rng: np.random.Generator) -> str:
    """A small CSV text: a header of three names, then rows of mostly three fields, some quoted (a space before
    the quote at times), made of letters, digits, spaces, tabs, quotes, separators, line ends and tokens."""
    pieces = ["a", "1", "01", " ", "  ", "\t", '"', ",", "\n", "\r\n", "?", "NA", "x y", "-1.0"]
    rows = []
    for _ in range(int(rng.integers(1, 5))):
        fields = []
        for _ in range(int(rng.choice([2, 3, 3, 3, 3, 4]))):
            field = "".join(rng.choice(pieces, size=int(rng.integers(0, 4))))
            if rng.random() < 0.3:
                field = rng.choice(["", " "]) + '"' + field.replace('"', '""') + '"'
            elif rng.random() < 0.7:
                field = field.translate({ord(c): None for c in '",\n\r'})
            fields.append(field)
        rows.append(",".join(fields))
    return "h1,h2,h3\n" + "".join(row + rng.choice(["\n", "\r\n"]) for row in rows)


def test_random_files_read_as_pandas_reads_them(tmp_path):
    """Brute force: whenever the fast reader returns a frame for a random file, pandas returns the same one
    (never an error); the fast reader returns one for many files, and refuses many."""
    rng = np.random.default_rng(0)
    path, taken, trials = tmp_path / "table.csv", 0, 600
    for _ in range(trials):
        text = _random_file(rng)
        path.write_bytes(text.encode())
        fast = read_text(path, header=True, missing=["-1"])
        if fast is None:
            continue
        taken += 1
        reference = pd.read_csv(path, dtype=str, skipinitialspace=True, na_values=["-1"], keep_default_na=True)
        pd.testing.assert_frame_equal(fast, reference, check_exact=True, obj=repr(text))
    assert trials // 20 <= taken <= trials - trials // 20


def test_quoted_line_ends_across_pyarrow_blocks(tmp_path, monkeypatch):
    """A file of many of pyarrow's blocks (64 KB here) with a quoted line end in every row: read fast, one frame,
    its columns in as many chunks."""
    monkeypatch.setattr(arrowcsv, "BLOCK", 1 << 16)
    path = tmp_path / "table.csv"
    path.write_bytes(b"a,b\n" + b"".join(b'"row %d\nsecond line, with a comma",%d\n' % (i, i) for i in range(60_000)))
    got, taken = _read(path, {}, True, monkeypatch)
    expected, _ = _read(path, {}, False, monkeypatch)
    assert taken and len(got) == 60_000 and pa.array(got["a"].array).num_chunks > 30
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_rows_with_leading_spaces_across_pyarrow_blocks(tmp_path, monkeypatch):
    """Raw-Adult-like rows (``", "``, ``" ?"``, a token after two spaces, a trailing space, text beyond ASCII)
    in many blocks (64 KB here): read fast, the frame pandas reads, every column in many chunks."""
    monkeypatch.setattr(arrowcsv, "BLOCK", 1 << 16)
    rows = [b"%d, State-gov, %d, ?,  ?, caf\xc3\xa9 , <=50K" % (i, 77516 + i) for i in range(20_000)]
    rows[7_777] = b"1,   Private, 2, x, y, z , >50K"
    path = tmp_path / "table.csv"
    path.write_bytes(b"\n".join(rows) + b"\n")
    options = dict(missing=["?"], columns=["age", "workclass", "fnlwgt", "a", "b", "c", "income"])
    got, taken = _read(path, options, True, monkeypatch)
    expected, _ = _read(path, options, False, monkeypatch)
    assert taken and pa.array(got["workclass"].array).num_chunks > 10
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert got["b"].isna().sum() == 19_999 and got["c"].iloc[0] == "café "
    assert got["workclass"].iloc[7_777] == "Private"


def test_a_file_without_the_quote_is_parsed_without_quoted_line_ends(tmp_path, monkeypatch):
    """Only a file holding the quote character pays for pyarrow's parse of quoted line ends."""
    seen = []
    parse = arrowcsv._parse

    def spy(pa_module, body, **kwargs):
        seen.append(kwargs["quoted"])
        return parse(pa_module, body, **kwargs)

    monkeypatch.setattr(arrowcsv, "_parse", spy)
    (tmp_path / "plain.csv").write_bytes(b"a,b\n1,2\n")
    (tmp_path / "quoted.csv").write_bytes(b'a,b\n"1\n2",3\n')
    assert read_text(tmp_path / "plain.csv", header=True) is not None
    assert read_text(tmp_path / "quoted.csv", header=True) is not None
    assert seen == [False, True]
    assert pa.large_string() == arrowcsv._parse(pa, memoryview(b"a,b\n1,2\n"), sep=",", tokens=[],
                                                quoted=False).schema.field(0).type
