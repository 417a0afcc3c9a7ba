"""The CLI on bad or awkward input: exit status 2, a message naming the culprit, and no file created or changed.

Every case runs the real ``synthdp`` entry point in a fresh folder holding a
small table, a schema, a stale output and a few odd files; the folder's
entries, contents and modification times must be the same afterwards.
"""

from __future__ import annotations

import json
import os

import pytest

from synthdp.cli import main

#: End-to-end runs of the command line on bad input: ``-m 'not integration'`` leaves them out.
pytestmark = pytest.mark.integration

TABLE = "a,b\n1,2\n3,0\n2,2\n0,1\n"
GOOD = ["--bounds", "a=0:3", "b=0:3", "--bins", "a=4", "b=4"]
RUN = ["--epsilon", "1", "--delta", "1e-6", "--queries", "marginals:1", "--rounds", "2", "--seed", "0", "-q"]


def state(folder):
    """Entries of ``folder`` (hidden ones included) with content and modification time."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_symlink() or not p.is_file():
            out[str(p)] = "other"
        else:
            out[str(p)] = (p.read_bytes(), p.stat().st_mtime_ns)
    return out


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.csv").write_text(TABLE)
    (tmp_path / "out.csv").write_text("stale output\n")
    (tmp_path / "noheader.csv").write_text("1,2,x\n3,0,y\n")
    (tmp_path / "dup.csv").write_text("a,a\n1,2\n3,0\n")
    (tmp_path / "semi.csv").write_text("a;b\n1;2\n3;0\n")
    (tmp_path / "tab.tsv").write_text("a\tb\n1\t2\n3\t0\n")
    (tmp_path / "latin.csv").write_bytes("a,b\ncaf\xe9,1\nthé,2\n".encode("latin-1"))
    (tmp_path / "titled.csv").write_text("Survey 2024, wave 2\nconfidential\n" + TABLE)
    (tmp_path / "gap.csv").write_text("a,b\n1,2\n,0\n")
    (tmp_path / "cats.csv").write_text("a,b\nx,y\nz,y\n")
    (tmp_path / "three.csv").write_text("a,b,c\n1,2,0\n3,0,1\n")
    schema = {"format": "synthdp-schema", "version": 1, "missing_values": [], "attributes": [
        {"name": "a", "kind": "numeric", "bounds": [0, 3], "bins": 4, "clip": False, "missing": False,
         "dtype": "int64"},
        {"name": "b", "kind": "numeric", "bounds": [0, 3], "bins": 4, "clip": False, "missing": False,
         "dtype": "int64"}]}
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    (tmp_path / "draft.json").write_text(json.dumps({**schema, "_read_off_data": [{"column": "a", "read": ["bounds"]}]}))
    (tmp_path / "codes.csv").write_text("x,y,z\n0,1,2\n3,4,5\n")
    (tmp_path / "wide-domain.json").write_text(json.dumps({"x": 200, "y": 200, "z": 200}))
    (tmp_path / "sub").mkdir()
    (tmp_path / "plots.png").mkdir()
    os.mkfifo(tmp_path / "fifo")
    return tmp_path


def gen(*args, src="in.csv", out="out.csv"):
    return ["generate", src, "-o", out, *RUN, *args]


CASES = {
    # outputs, checked before anything private runs
    "output is the input": (gen(*GOOD, out="in.csv"), "is the input file"),
    "report is the output": (gen(*GOOD, "--report", "out.csv"), "-o and --report both name"),
    "report is the schema": (["generate", "in.csv", "-o", "new.csv", *RUN, "--schema", "schema.json",
                              "--report", "schema.json"], "is the input file"),
    "output is a directory": (gen(*GOOD, out="sub"), "is a directory"),
    "output folder missing": (gen(*GOOD, out="nowhere/x.csv"), "does not exist; create it first"),
    "output .xlsx": (gen(*GOOD, out="out.xlsx"), "unknown table format '.xlsx'; name the file .csv or .parquet"),
    "output without a suffix": (gen(*GOOD, out="synthetic"), "unknown table format '(no suffix)'"),
    "output is a FIFO": (gen(*GOOD, out="fifo"), "FIFO"),
    "output is a device": (gen(*GOOD, out="/dev/null"), "is a device"),
    "plot format unknown": (["evaluate", "in.csv", "in.csv", "--queries", "marginals:1", *GOOD, "--plot", "e.gif"],
                            "unknown plot format '.gif'"),
    "plot is a directory": (["evaluate", "in.csv", "in.csv", "--queries", "marginals:1", *GOOD,
                             "--plot", "plots.png"], "is a directory"),
    "schema draft output is the input": (["schema", "in.csv", "-o", "in.csv"], "is the input file"),
    # reading the CSV
    "--columns too few": (gen(*GOOD, "--columns", "a,b", src="noheader.csv"), "gives 2 names but the rows"),
    "--columns too many": (gen(*GOOD, "--columns", "a,b,c,d", src="noheader.csv"), "gives 4 names"),
    "--columns repeated": (gen(*GOOD, "--columns", "a,b,a", src="noheader.csv"), "names ['a'] more than once"),
    "header repeated": (gen(src="dup.csv"), "names ['a'] more than once"),
    "semicolon file": (gen(*GOOD, src="semi.csv"), "--sep ';'"),
    "comma file read with --sep ';'": (gen(*GOOD, "--sep", ";"), "but its first line contains ',': pass the "
                                                                  "separator, e.g. --sep ','"),
    "tab file": (gen(*GOOD, src="tab.tsv"), "--sep '\\t'"),
    "latin-1 file": (gen(src="latin.csv"), "--encoding latin-1"),
    "unknown encoding": (gen(*GOOD, "--encoding", "klingon"), "unknown text encoding"),
    "--skip-rows negative": (gen(*GOOD, "--skip-rows", "-1"), "--skip-rows"),
    "--skip-rows past the end": (gen(*GOOD, "--skip-rows", "5"), "is empty after skipping 5 lines"),
    "--skip-rows with --engine dask": (gen("--schema", "schema.json", "--skip-rows", "2", "--engine", "dask",
                                           src="titled.csv"), "--skip-rows applies to one CSV file"),
    "--drop unknown": (gen(*GOOD, "--drop", "zz"), "--drop names ['zz']"),
    # the domain
    "schema lacks a CSV column": (gen("--schema", "schema.json", src="three.csv"),
                                  "the schema has no column 'c'"),
    "--schema with --bounds": (gen("--schema", "schema.json", "--bounds", "a=0:9"), "--bounds would be ignored"),
    "draft schema": (gen("--schema", "draft.json"), "is a draft"),
    "bounds reversed": (gen("--bounds", "a=90:17", "b=0:3"), "LO (90) is above HI (17)"),
    "bounds empty": (gen("--bounds", "a=5:5", "b=0:3"), "LO equals HI"),
    "bounds nan": (gen("--bounds", "a=nan:90", "b=0:3"), "finite"),
    "bounds text": (gen("--bounds", "a=x:90", "b=0:3"), "must both be numbers"),
    "bounds no colon": (gen("--bounds", "a=90", "b=0:3"), "write the bounds as LO:HI"),
    "bounds twice": (gen("--bounds", "a=0:3", "a=0:4", "b=0:3"), "gives column 'a' twice"),
    "bins zero": (gen("--bounds", "a=0:3", "b=0:3", "--bins", "a=0"), "at least 1"),
    "bins text": (gen("--bounds", "a=0:3", "b=0:3", "--bins", "a=many"), "whole number"),
    "numeric column without bounds": (gen(), "pass --bounds a=LO:HI, optionally with --bins a=K, declare the "
                                             "column categorical (--categorical a), or, with --delta, have its "
                                             "bounds learned privately (--learn-bounds a)"),
    "bins without bounds": (gen("--bins", "a=4"), "--bins given for ['a'] without bounds; pass --bounds a=LO:HI"),
    "missing value, column not nullable": (gen("--schema", "schema.json", src="gap.csv"),
                                           "declare it with --nullable a (or \"missing\": true in the --schema file)"),
    "pure DP and categories to learn": (["generate", "cats.csv", "-o", "out.csv", "--epsilon", "1", "--queries",
                                         "marginals:1", "--rounds", "2", "-q"], "(no --delta). Give the categories "
                                                                                "publicly (--schema FILE)"),
    # the budget (fixed public ceilings, checked before the file is read)
    "epsilon 360": (["generate", "in.csv", "-o", "out.csv", *GOOD, "--epsilon", "360", "-q"],
                    "epsilon must be at most 100, got 360.0"),
    "epsilon -1": (["generate", "in.csv", "-o", "out.csv", *GOOD, "--epsilon", "-1", "-q"],
                   "epsilon must be a positive finite number (the privacy budget"),
    "epsilon 0": (["generate", "in.csv", "-o", "out.csv", *GOOD, "--epsilon", "0", "-q"],
                  "epsilon must be a positive finite number (the privacy budget"),
    "delta 0.1 under add-remove": (["generate", "in.csv", "-o", "out.csv", *GOOD, "--epsilon", "1", "--delta", "0.1"],
                                   "the most synthdp accepts under add-remove"),
    # the query class
    "pure DP, no player fits": (["generate", "codes.csv", "-o", "new.csv", "--epsilon", "1", "--queries",
                                 "marginals:3", "--schema", "wide-domain.json", "--method", "game", "-q"],
                                "pure DP (no delta) allows only"),
    "marginals:0": (gen(*GOOD, "--queries", "marginals:0"), "width of at least 1"),
    "conjunctions wider than the table": (gen(*GOOD, "--queries", "conjunctions:3"),
                                          "the query class 'conjunctions:3' reads up to 3 columns, but the table has "
                                          "2; give a width of at most 2 (e.g. conjunctions:2)"),
}


@pytest.mark.parametrize("argv, message", CASES.values(), ids=CASES.keys())
def test_bad_input_exits_2_names_the_culprit_and_touches_nothing(folder, capsys, argv, message):
    before = state(folder)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("synthdp: error:") and message in err, err
    assert "Traceback" not in err
    assert state(folder) == before, "no file may be created or changed, not even a temporary one"


def test_a_header_of_numbers_is_a_header_and_a_file_without_one_is_warned_about(folder, capsys):
    """Columns named by numbers exist (the NLTCS file's ``0,1,...,15``, years): a header that the schema names is
    read without a word; without a schema it is read as the header, with one warning that says how to read a file
    that has none, and the run goes on (here to the bounds' refusal of the unknown column ``a``)."""
    (folder / "years.csv").write_text("0,1,2\n" + "1,0,1\n0,1,1\n1,1,0\n" * 10)
    (folder / "years.json").write_text(json.dumps({"0": 2, "1": 2, "2": 2}))
    assert main(["generate", "years.csv", "-o", "syn.csv", "--schema", "years.json", *RUN]) == 0
    assert capsys.readouterr().err == ""
    assert (folder / "syn.csv").read_text().splitlines()[0] == "0,1,2"

    assert main(["generate", "noheader.csv", "-o", "new.csv", *RUN, *GOOD]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == ("warning: the first line of 'noheader.csv' is read as its header, although ['1', '2'] are "
                      "numbers; if the file has no header row, name its 3 fields with --columns NAME1,NAME2,... "
                      "(Python: columns=[...]) so that its first row is not lost"), err
    assert len(err) == 2 and err[1].startswith("synthdp: error:") and "'a'" in err[1], err


def test_the_default_marginal_width_is_capped_at_the_number_of_columns_and_the_report_says_so(folder, capsys):
    """``marginals:3`` (the default) on a two-column table measures the 2-way marginal, and the report says why."""
    assert main(["generate", "in.csv", "-o", "new.csv", *GOOD, "--epsilon", "1", "--delta", "1e-6", "--seed", "0",
                 "-q", "--report", "r.json"]) == 0, capsys.readouterr().err
    release = json.loads((folder / "r.json").read_text())
    assert release["query_class"] == "marginals:2+complements"
    assert release["plan"]["queries"] == {
        "value": "marginals:2",
        "reason": "marginals:3 asks for marginals of 3 columns, but the table has 2: marginals:2, the marginals of "
                  "all its columns, instead"}


def test_warnings_print_as_one_line_once_without_source_lines(folder, capsys, monkeypatch):
    """A library warning reaches the command line as ``warning: ...``, once, with no file path or source line."""
    import warnings

    from synthdp.cli import demo

    def twice(args):
        for _ in range(2):
            warnings.warn("something to know\n  over two lines", UserWarning)
        return 0

    monkeypatch.setattr(demo, "run", twice)
    assert main(["demo", "-q"]) == 0
    assert capsys.readouterr().err == "warning: something to know over two lines\n"


def test_several_pairs_per_flag_and_verbose_after_the_subcommand(folder, capsys):
    code = main(["generate", "in.csv", "-o", "new.csv", *RUN, "--bounds", "a=0:3", "b=0:3", "--bins", "a=4", "b=2",
                 "--report", "r.json"])
    assert code == 0, capsys.readouterr().err
    assert json.loads((folder / "r.json").read_text())["rounds"] == 2
    assert (folder / "new.csv").read_text().splitlines()[0] == "a,b"
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("argv, level", [(["demo"], 0), (["-v", "demo"], 1), (["demo", "-v"], 1),
                                         (["-vv", "schema", "x", "-o", "y"], 2), (["schema", "x", "-o", "y", "-vv"], 2),
                                         (["generate", "x", "-o", "y", "--epsilon", "1", "-v"], 1)])
def test_verbose_before_or_after_the_subcommand(argv, level):
    from synthdp.cli import build_parser

    assert build_parser().parse_args(argv).verbose == level


def test_separator_and_encoding_options_read_the_awkward_files(folder, capsys):
    assert main(["schema", "semi.csv", "-o", "s1.json", "--sep", ";"]) == 0
    assert [a["name"] for a in json.loads((folder / "s1.json").read_text())["attributes"]] == ["a", "b"]
    assert main(["schema", "tab.tsv", "-o", "s3.json", "--sep", "\\t"]) == 0
    assert [a["name"] for a in json.loads((folder / "s3.json").read_text())["attributes"]] == ["a", "b"]
    assert main(["schema", "latin.csv", "-o", "s2.json", "--encoding", "latin-1"]) == 0
    cats = json.loads((folder / "s2.json").read_text())["attributes"][0]["categories"]
    assert cats == ["café", "thé"]


def _best_seconds(action, repeats: int = 3) -> float:
    """The fastest of a few runs of ``action``: the growth tests below compare two sizes, not a time limit."""
    import time

    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def test_counting_the_cells_of_all_3_way_marginals_of_200_columns_lists_nothing():
    from synthdp.core.domain import Domain
    from synthdp.methods.game.players import workload_size
    from synthdp.queries.spec import parse_query_class

    def count(columns: int) -> int:
        domain = Domain(tuple(f"c{i}" for i in range(columns)), (2,) * columns)
        return workload_size(parse_query_class("marginals:3", domain, closed=False))

    assert count(200) == 1_313_400 * 8
    # Listing the attribute sets grows 64-fold from 50 to 200 columns; counting them does not grow.
    assert _best_seconds(lambda: count(200)) < 8 * _best_seconds(lambda: count(50)) + 0.05


def test_a_workload_of_many_marginals_is_built_without_a_quadratic_scan():
    import itertools

    from synthdp.core.domain import Domain
    from synthdp.queries.workload import Workload

    def build(columns: int) -> Workload:
        domain = Domain(tuple(f"c{i}" for i in range(columns)), (2,) * columns)
        return Workload(domain, itertools.combinations(range(columns), 3))

    assert len(build(60).marginal_attrs) == 34_220
    # 8.4 times the attribute sets of 30 columns: a linear build grows about 8-fold, a list scan 71-fold.
    assert _best_seconds(lambda: build(60)) < 30 * _best_seconds(lambda: build(30))


def test_a_failing_report_leaves_no_csv_and_the_old_files_untouched(folder, capsys, monkeypatch):
    import synthdp.files.csvfile

    def disk_full(obj, path):
        path.write_text("{")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(synthdp.files.csvfile, "dump_json", disk_full)
    (folder / "r.json").write_text("old report\n")
    before = state(folder)
    code = main(gen(*GOOD, "--report", "r.json", out="out.csv"))
    err = capsys.readouterr().err
    assert code == 2 and "writing --report 'r.json' failed (No space left on device)" in err, err
    assert state(folder) == before


def test_output_through_a_symbolic_link_replaces_the_file_it_points_to(folder, capsys):
    os.symlink("out.csv", folder / "link.csv")
    assert main(gen(*GOOD, out="link.csv")) == 0, capsys.readouterr().err
    assert os.path.islink(folder / "link.csv") and (folder / "out.csv").read_text().startswith("a,b\n")


def test_output_format_follows_the_name_in_the_cli_and_in_python(folder, capsys):
    """One rule for -o and SyntheticResult.save: .csv is CSV, .parquet is Parquet, anything else is refused."""
    import pandas as pd

    import synthdp
    from synthdp.core.errors import InputError

    assert main(gen(*GOOD, out="new.parquet")) == 0, capsys.readouterr().err
    table = pd.read_parquet(folder / "new.parquet")
    assert list(table.columns) == ["a", "b"]
    result = synthdp.generate_synthetic(pd.read_csv(folder / "in.csv"), "marginals:1", epsilon=1, delta=1e-6,
                                        bounds={"a": (0, 3), "b": (0, 3)}, rounds=2, random_state=0, progress=False)
    result.save(folder / "py.parquet")
    result.save(folder / "py.csv")
    result.to_csv(folder / "py2.csv")
    assert pd.read_parquet(folder / "py.parquet").shape == pd.read_csv(folder / "py.csv").shape
    before = state(folder)
    for name, message in [("py.xlsx", "unknown table format '.xlsx'"), ("py.txt", "unknown table format '.txt'")]:
        with pytest.raises(InputError, match=message):
            result.save(folder / name)
        with pytest.raises(InputError, match=message):
            result.to_csv(folder / name)
    with pytest.raises(InputError, match="names a parquet file but this writes csv"):
        result.to_csv(folder / "py.parquet")
    assert state(folder) == before


def test_skip_rows_reads_a_file_with_leading_title_lines(folder, capsys):
    """Without --skip-rows the title line is taken for the header; with it the table reads as the plain one."""
    assert main(gen(*GOOD, src="titled.csv", out="new.csv")) == 2
    assert main(gen(*GOOD, "--skip-rows", "2", src="titled.csv", out="new.csv")) == 0, capsys.readouterr().err
    assert (folder / "new.csv").read_text().splitlines()[0] == "a,b"


def test_evaluate_json_writes_the_figures_with_the_plot_as_one_unit(folder, capsys):
    """evaluate --json FILE: the summary and every marginal's errors (or the certified worst case) for programs."""
    assert main(["evaluate", "in.csv", "in.csv", "--queries", "marginals:1", *GOOD, "--json", "e.json"]) == 0
    got = json.loads((folder / "e.json").read_text())
    assert got["queries"] == "marginals:1" and got["marginals"] == 2 and got["max_error"] == 0.0
    assert [m["marginal"] for m in got["per_marginal"]] == ["a", "b"]
    assert main(["evaluate", "in.csv", "in.csv", "--queries", "conjunctions", *GOOD, "--json", "w.json"]) == 0
    worst = json.loads((folder / "w.json").read_text())["worst_case"]
    assert worst["certified"] and worst["error"] == 0.0
    before = state(folder)
    code = main(["evaluate", "in.csv", "in.csv", "--queries", "marginals:1", *GOOD, "--json", "in.csv"])
    assert code == 2 and "is the input file" in capsys.readouterr().err
    assert state(folder) == before


@pytest.mark.parametrize("kwargs, python, cli", [
    (dict(), "pass bounds={'a': (lo, hi)}", "--bounds"),
    (dict(bins={"a": 4}), "pass bounds={col: (lo, hi)} too", "--bounds"),
])
def test_the_python_api_keeps_keyword_advice(folder, kwargs, python, cli):
    """The same errors in Python speak in keywords; the command line's form is kept beside them."""
    import pandas as pd

    import synthdp
    from synthdp.core.errors import SchemaError

    with pytest.raises(SchemaError, match=python.replace("(", r"\(").replace(")", r"\)")) as info:
        synthdp.generate_synthetic(pd.read_csv(folder / "in.csv"), "marginals:1", epsilon=1, delta=1e-6, **kwargs)
    assert "--" not in str(info.value) and cli in info.value.for_cli()


def test_a_misspelt_flag_is_refused_with_the_nearest_flags(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["generate", "no-such.csv", "-o", "out.csv", "--epsilon", "1", "--nulable", "a", "--zzz"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --nulable a --zzz; --nulable: did you mean --nullable?" in err, err
