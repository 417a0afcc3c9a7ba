"""Parsing query-class specs: every form, closure wrapping, workload files and keys, errors."""

from __future__ import annotations

import json

import pytest

from synthdp.queries import (ComplementClosed, Conjunctions, Disjunctions, Halfspaces, MonotoneConjunctions, Parities,
                     Workload, parse_query_class)
from synthdp.queries.spec import FORMS, benchmarks_dir
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError

DOM = Domain.from_sizes({"age": 4, "sex": 2, "race": 3, "income": 2})


@pytest.mark.parametrize("spec, kind, attrs", [
    ("marginals:3", Conjunctions, {"min_width": 3, "max_width": 3}),
    ("marginals:<=3", Conjunctions, {"min_width": 1, "max_width": 3}),
    (" Marginals : <= 2 ", Conjunctions, {"min_width": 1, "max_width": 2}),
    ("conjunctions", Conjunctions, {"min_width": 1, "max_width": 4}),
    ("conjunctions:2", Conjunctions, {"min_width": 1, "max_width": 2}),
    ("monotone", MonotoneConjunctions, {"max_width": 4 + 2 + 3 + 2 - 2}),
    ("monotone:2", MonotoneConjunctions, {"max_width": 2}),
    ("parities", Parities, {"max_width": 9}),
    ("parities:1", Parities, {"max_width": 1}),
    ("disjunctions", Disjunctions, {}),
    ("halfspaces", Halfspaces, {"weight_bound": 1}),
    ("halfspaces:3", Halfspaces, {"weight_bound": 3}),
])
def test_each_form(spec, kind, attrs):
    closed = parse_query_class(spec, DOM)
    plain = parse_query_class(spec, DOM, closed=False)
    assert isinstance(plain, kind)
    assert {k: getattr(plain, k) for k in attrs} == attrs
    assert closed.complement_closed
    if kind is Halfspaces:
        assert type(closed) is Halfspaces
    else:
        assert isinstance(closed, ComplementClosed) and type(closed.base) is kind


def test_disjunction_width():
    qc = parse_query_class("disjunctions:2", DOM, closed=False)
    assert isinstance(qc.base, Conjunctions) and (qc.base.min_width, qc.base.max_width) == (1, 2)


def test_query_class_passes_through():
    base = Conjunctions.marginals(DOM, 2)
    assert parse_query_class(base, DOM, closed=False) is base
    wrapped = parse_query_class(base, DOM)
    assert isinstance(wrapped, ComplementClosed) and wrapped.base is base
    assert parse_query_class(wrapped, DOM) is wrapped


def test_workload_from_path(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps([["age", "sex"], ["race"]]))
    qc = parse_query_class(f"workload:{path}", DOM, closed=False)
    assert isinstance(qc, Workload) and qc.marginal_attrs == ((0, 1), (2,))
    assert qc.name == "workload:mine"
    assert isinstance(parse_query_class(f"workload:{path}", DOM), ComplementClosed)


def test_workload_from_key(tmp_path, monkeypatch):
    (tmp_path / "many.json").write_text(json.dumps({"small_2way": [["age", "race"], ["sex", "income"]], "note": "x"}))
    (tmp_path / "alone.json").write_text(json.dumps([["income"]]))
    monkeypatch.setenv("SYNTHDP_BENCHMARKS_DIR", str(tmp_path))
    assert benchmarks_dir() == tmp_path
    qc = parse_query_class("workload:small_2way", DOM, closed=False)
    assert qc.marginal_attrs == ((0, 2), (1, 3)) and qc.n_cells == 12 + 4
    assert parse_query_class("workload:alone", DOM, closed=False).marginal_attrs == ((3,),)
    with pytest.raises(InputError, match=r"available: \['alone', 'small_2way'\]"):
        parse_query_class("workload:nope", DOM)


def test_workload_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTHDP_BENCHMARKS_DIR", str(tmp_path))
    bad = tmp_path / "bad.json"
    bad.write_text("[not json")
    with pytest.raises(InputError, match="cannot read"):
        parse_query_class(f"workload:{bad}", DOM)
    (tmp_path / "good.json").write_text(json.dumps({"k": [["age"]]}))
    assert parse_query_class("workload:k", DOM, closed=False).n_cells == 4  # bad.json is skipped
    with pytest.raises(InputError, match="cannot read"):
        parse_query_class(f"workload:{tmp_path / 'missing.json'}", DOM)
    many = tmp_path / "sub" / "many.json"
    many.parent.mkdir()
    many.write_text(json.dumps({"a": [["age"]]}))
    with pytest.raises(InputError, match="workload:KEY"):
        parse_query_class(f"workload:{many}", DOM)
    unknown = tmp_path / "sub" / "unknown.json"
    unknown.write_text(json.dumps([["age", "height"]]))
    with pytest.raises(InputError, match="'height'"):
        parse_query_class(f"workload:{unknown}", DOM)
    scalar = tmp_path / "sub" / "scalar.json"
    scalar.write_text("3")
    with pytest.raises(InputError, match="list"):
        parse_query_class(f"workload:{scalar}", DOM)


@pytest.mark.parametrize("spec", ["", "foo", "marginals", "marginals:", "marginals:x", "marginals:<=",
                                  "marginals:-1", "conjunctions:2.5", "monotone:²", "parities:1:2", "workload",
                                  "workload:", 3, None])
def test_malformed_specs_list_the_valid_forms(spec):
    with pytest.raises(InputError) as err:
        parse_query_class(spec, DOM)
    assert all(form in str(err.value) for form in FORMS)


@pytest.mark.parametrize("spec, match", [("halfspaces:0", "weight_bound"),
                                         ("conjunctions:9", "'conjunctions:9' reads up to 9 columns, but the table "
                                                            "has 4; give a width of at most 4"),
                                         ("conjunctions:0", "max_width"), ("parities:10", "0..9"),
                                         ("marginals:5", "'marginals:5' reads up to 5 columns, but the table has 4")])
def test_out_of_range_parameters(spec, match):
    with pytest.raises(InputError, match=match):
        parse_query_class(spec, DOM)


@pytest.mark.parametrize("spec", ["marginals:0", "marginals:<=0"])
def test_zero_way_marginal_is_refused(spec):
    # its only query is the total "TRUE", on which a game would spend its whole budget for nothing
    with pytest.raises(InputError, match="width of at least 1"):
        parse_query_class(spec, DOM, closed=False)


def test_adult_benchmark_workload():
    folder = benchmarks_dir()
    data_dir = folder.parent / "datasets"
    if not (folder / "adult-workloads.json").is_file() or not (data_dir / "adult-domain.json").is_file():
        pytest.skip("shared ADULT benchmark files not available")
    dom = Domain.from_sizes(json.loads((data_dir / "adult-domain.json").read_text()))
    qc = parse_query_class("workload:adult_3way_64", dom)
    assert qc.base.n_cells == 458_996 and qc.size() == 2 * 458_996
    assert qc.separator().m == 68


def test_evaluation_benchmark_runs(tmp_path):
    from synthdp.bench.answering import data_dir, run

    if not (data_dir() / "adult.csv").is_file() or not (benchmarks_dir() / "adult-workloads.json").is_file():
        pytest.skip("shared ADULT data not available")
    out = tmp_path / "evaluation.json"
    result = run(["--repeats", "1", "--out", str(tmp_path)])  # --out DIR, as every bench target
    assert result["cells"] == 458_996 and result["rows"] == 48_842
    assert json.loads(out.read_text()) == result
