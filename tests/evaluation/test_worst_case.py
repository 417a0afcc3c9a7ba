"""The certified worst-case evaluator (synthdp.evaluation.worst_case) against brute force, and its CLI."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from synthdp.cli import main
from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError
from synthdp.core.schema import Schema
from synthdp.evaluation.marginals import marginal_errors
from synthdp.oracles.exact import suffix as exact_suffix, transform as exact_transform
from synthdp.oracles.base import Limits
from synthdp.oracles.exact.common import Budget
from synthdp.queries.complement import base_class
from synthdp.queries.conjunctions import Conjunctions
from synthdp.queries.monotone import MonotoneConjunctions
from synthdp.queries.parities import Parities
from synthdp.queries.spec import parse_query_class
from synthdp.queries.workload import Workload
from synthdp.evaluation.worst_case import worst_case_error


def _data(domain: Domain, rng: np.random.Generator, n: int, skew: float = 0.0) -> AggregatedData:
    """``n`` random records; ``skew`` tilts every attribute towards value 0."""
    cols = []
    for size in domain.sizes:
        p = np.full(size, 1.0) + skew * (np.arange(size) == 0)
        cols.append(rng.choice(size, size=n, p=p / p.sum()))
    return AggregatedData.from_codes(domain, np.stack(cols, axis=1))


def brute_errors(query_class, real: AggregatedData, syn: AggregatedData) -> list[Fraction]:
    """q(real) - q(syn) for every query of the (base) class, in exact fractions."""
    qs = query_class.enumerate()
    r, s = query_class.answers(qs, real), query_class.answers(qs, syn)
    return [Fraction(int(a), real.n) - Fraction(int(b), syn.n) for a, b in zip(r, s)]


def brute_max(query_class, real: AggregatedData, syn: AggregatedData) -> Fraction:
    """max |q(real) - q(syn)| over every query of the class."""
    return max(map(abs, brute_errors(query_class, real, syn)))


def signed_error(query_class, query, real: AggregatedData, syn: AggregatedData) -> Fraction:
    return (Fraction(int(query_class.answers([query], real)[0]), real.n)
            - Fraction(int(query_class.answers([query], syn)[0]), syn.n))


def check(result, spec, real, syn, backend="auto"):
    qc = base_class(parse_query_class(spec, real.domain, closed=False))
    truth = brute_max(qc, real, syn)
    assert result.certified, (spec, backend, result.message)
    assert result.exact_upper == result.exact_lower == truth, (spec, backend)
    assert result.error == float(truth)
    assert qc.contains(result.query)
    err = signed_error(qc, result.query, real, syn)
    assert abs(err) == truth
    assert result.real_answer - result.synthetic_answer == pytest.approx(float(err))
    assert result.text == qc.describe(result.query)
    return err


MIXED = Domain.from_sizes({"a": 2, "b": 3, "c": 2, "d": 2})
BINARY = Domain.from_sizes({f"x{i}": 2 for i in range(5)})

#: (spec, domain, backends): every supported class, on the backends that handle it.
CASES = [
    ("conjunctions", MIXED, ["auto", "cpsat"]),
    ("conjunctions:2", MIXED, ["auto", "brute"]),
    ("marginals:2", MIXED, ["auto"]),
    ("monotone", MIXED, ["auto", "cpsat"]),
    ("monotone:2", BINARY, ["auto"]),
    ("disjunctions", MIXED, ["auto", "cpsat"]),
    ("disjunctions", BINARY, ["auto", "brute"]),
    ("disjunctions:2", BINARY, ["auto"]),
    ("parities:2", MIXED, ["auto", "cpsat", "brute"]),
    ("parities", BINARY, ["auto"]),
    ("halfspaces:1", Domain.from_sizes({"a": 2, "b": 3, "c": 2}), ["auto", "cpsat"]),
    ("halfspaces:2", Domain.from_sizes({"a": 2, "b": 2, "c": 2}), ["auto"]),
]


@pytest.mark.parametrize("spec, domain, backends", CASES, ids=[c[0] for c in CASES])
def test_agrees_with_brute_force_both_signs(spec, domain, backends):
    rng = np.random.default_rng(len(spec))
    real, syn = _data(domain, rng, 40, skew=1.5), _data(domain, rng, 25)
    errors = brute_errors(base_class(parse_query_class(spec, domain, closed=False)), real, syn)
    top = max(map(abs, errors))
    tie = top in errors and -top in errors  # the maximum is attained with both signs
    signs = set()
    for backend in backends:
        for a, b in ((real, syn), (syn, real)):  # swapping the tables flips the sign of every error
            signs.add(int(np.sign(check(worst_case_error(a, b, spec, backend=backend), spec, a, b, backend))))
    assert signs == {-1, 1} or tie


def test_workload_class_and_marginal_report_agree():
    rng = np.random.default_rng(7)
    real, syn = _data(MIXED, rng, 60, skew=2.0), _data(MIXED, rng, 30)
    work = Workload(MIXED, [(0, 1), (1, 2, 3)])
    result = worst_case_error(real, syn, work)
    assert result.certified and result.exact_upper == brute_max(work, real, syn)
    three = worst_case_error(real, syn, "marginals:3")
    report = marginal_errors(real, syn, list(itertools.combinations(range(4), 3)))
    assert three.error == pytest.approx(report.max_error, abs=1e-12)


def test_ties_between_senses_and_between_queries():
    dom = Domain.from_sizes({"x": 2, "y": 2})
    real = AggregatedData.from_codes(dom, np.array([[0, 0], [0, 1]]))
    syn = AggregatedData.from_codes(dom, np.array([[1, 0], [1, 1]]))
    # x=0 has error +1 and x=1 error -1: the two senses tie at the maximum 1.
    for spec in ("conjunctions", "marginals:1", "disjunctions", "parities:1", "halfspaces:1"):
        check(worst_case_error(real, syn, spec), spec, real, syn)
        assert worst_case_error(real, syn, spec).error == 1.0
    same = worst_case_error(real, real, "conjunctions")  # identical tables: every query ties at 0
    assert same.certified and same.error == 0.0 and same.query is not None


def test_table_rows_and_scale_are_exact():
    """Different table sizes: the error is an exact fraction with denominator n * m."""
    dom = Domain.from_sizes({"x": 3})
    real = AggregatedData.from_codes(dom, np.array([[0], [0], [1]]))
    syn = AggregatedData.from_codes(dom, np.array([[2]] * 6 + [[0]]))
    result = worst_case_error(real, syn, "conjunctions")
    assert result.exact_upper == Fraction(6, 7)  # x=2: 0 - 6/7
    assert result.query.literals == ((0, 2),) and result.synthetic_answer == pytest.approx(6 / 7)


@pytest.mark.parametrize("kind", ["conjunctions", "monotone"])
def test_row_class_search_against_enumeration(kind):
    """The row-class branch and bound of oracles/exact/suffix.py: exact on random weights and width bounds."""
    rng = np.random.default_rng(3)
    for _ in range(120):
        sizes = rng.integers(2, 4, size=rng.integers(1, 5))
        dom = Domain.from_sizes({f"a{i}": int(s) for i, s in enumerate(sizes)})
        n = int(rng.integers(0, 12))
        codes = np.unique(np.stack([rng.integers(0, s, n) for s in sizes], axis=1).reshape(n, len(sizes)), axis=0)
        weights = rng.integers(-5, 6, len(codes)) + int(rng.integers(0, 4))
        lo = int(rng.integers(0, len(sizes) + 1))
        hi = int(rng.integers(lo, len(sizes) + 1))
        qc = Conjunctions(dom, min_width=lo, max_width=hi) if kind == "conjunctions" else \
            MonotoneConjunctions(dom, max_width=hi)
        queries = qc.enumerate()
        if not queries:
            continue
        best = int(qc.answer(queries, codes, weights).min())
        out = exact_suffix.minimize(qc, codes, weights, Budget(Limits()))
        assert out.proven and out.value == best and qc.contains(out.solution)
        assert int(qc.answer([out.solution], codes, weights)[0]) == best


@pytest.mark.parametrize("width", [0, 1, 2, None])
def test_walsh_hadamard_parities_against_enumeration(width):
    rng = np.random.default_rng(5)
    for _ in range(40):
        sizes = rng.integers(2, 4, size=rng.integers(1, 4))
        dom = Domain.from_sizes({f"a{i}": int(s) for i, s in enumerate(sizes)})
        qc = Parities(dom, max_width=None if width is None else min(width, sum(s if s > 2 else 1 for s in sizes)))
        n = int(rng.integers(0, 10))
        codes = np.stack([rng.integers(0, s, n) for s in sizes], axis=1).reshape(n, len(sizes))
        weights = rng.integers(-6, 7, n)
        best = int(qc.answer(qc.enumerate(), codes, weights).min())
        out = exact_transform.minimize(qc, codes, weights)
        assert out.proven and out.value == best and qc.contains(out.solution)
        assert int(qc.answer([out.solution], codes, weights)[0]) == best


def test_row_class_search_refuses_workloads():
    assert not exact_suffix.supported(Workload(MIXED, [(0, 1)]))
    with pytest.raises(TypeError):
        exact_suffix.minimize(Workload(MIXED, [(0, 1)]), np.zeros((0, 4), dtype=np.int64), np.zeros(0), Budget(Limits()))


def _hard_pair():
    dom = Domain.from_sizes({f"x{i}": 2 for i in range(9)})
    rng = np.random.default_rng(11)
    return _data(dom, rng, 400, skew=0.8), _data(dom, rng, 300)


def test_work_limit_gives_valid_bounds_not_a_maximum():
    real, syn = _hard_pair()
    truth = brute_max(Conjunctions(real.domain), real, syn)
    result = worst_case_error(real, syn, "conjunctions", work_limit=2)
    assert not result.certified and result.error is None
    assert result.exact_lower <= truth <= result.exact_upper
    assert result.exact_lower > 0 and result.exact_upper < 1
    assert abs(signed_error(Conjunctions(real.domain), result.query, real, syn)) == result.exact_lower
    assert "NOT certified" in result.summary() and "best query found" in result.summary()


@pytest.mark.parametrize("backend", ["auto", "cpsat", "brute"])
def test_tiny_time_limit_is_not_certified(backend):
    real, syn = _hard_pair()
    truth = brute_max(Conjunctions(real.domain), real, syn)
    result = worst_case_error(real, syn, "conjunctions" if backend != "brute" else "conjunctions:9",
                              time_limit=1e-6, backend=backend)
    assert not result.certified and result.error is None
    assert result.exact_lower <= truth <= result.exact_upper


def test_bad_input():
    rng = np.random.default_rng(0)
    real = _data(MIXED, rng, 10)
    with pytest.raises(InputError, match="unknown query class"):
        worst_case_error(real, real, "cliques")
    with pytest.raises(InputError, match="unknown backend"):
        worst_case_error(real, real, "conjunctions", backend="gurobi")
    with pytest.raises(InputError, match="exact backend does not handle"):
        worst_case_error(real, real, "halfspaces:1", backend="exact")
    with pytest.raises(InputError, match="time_limit"):
        worst_case_error(real, real, "conjunctions", time_limit=0)
    other = _data(Domain.from_sizes({"a": 2, "b": 3, "c": 2, "e": 2}), rng, 10)
    with pytest.raises(InputError, match="different domains"):
        worst_case_error(real, other, "conjunctions")
    df = pd.DataFrame({"a": [0, 1], "b": ["u", "v"]})
    with pytest.raises(InputError, match=r"lacks the real table's columns \['b'\]"):
        worst_case_error(df, df[["a"]], "conjunctions")
    with pytest.raises(InputError, match=r"has columns \['z'\]"):
        worst_case_error(df, df.assign(z=1), "conjunctions")
    with pytest.raises(InputError, match="both be DataFrames"):
        worst_case_error(df, real, "conjunctions")


def _categorical(name: str, categories: list[str]) -> dict:
    return {"name": name, "kind": "categorical", "categories": categories, "missing": False, "dtype": None}


SCHEMA = {"format": "synthdp-schema", "version": 1, "missing_values": [],
          "attributes": [_categorical("age", ["young", "old"]), _categorical("sex", ["F", "M"]),
                         _categorical("smoker", ["no", "yes"])]}


@pytest.fixture
def csv_pair(tmp_path):
    real = pd.DataFrame({"age": ["young", "old", "old", "young", "old"], "sex": ["F", "F", "M", "M", "F"],
                         "smoker": ["no", "yes", "yes", "no", "yes"]})
    syn = pd.DataFrame({"age": ["young", "young", "old", "young"], "sex": ["M", "M", "F", "F"],
                        "smoker": ["no", "no", "yes", "yes"]})
    paths = tmp_path / "real.csv", tmp_path / "syn.csv", tmp_path / "schema.json"
    real.to_csv(paths[0], index=False)
    syn.to_csv(paths[1], index=False)
    paths[2].write_text(json.dumps(SCHEMA))
    return real, syn, [str(p) for p in paths]


def test_cli_certified(csv_pair, capsys):
    real, syn, (real_path, syn_path, schema) = csv_pair
    truth = worst_case_error(real, syn, "conjunctions", schema=Schema.from_dict(SCHEMA))
    assert truth.certified
    assert main(["evaluate", real_path, syn_path, "--queries", "conjunctions", "--schema", schema]) == 0
    out = capsys.readouterr().out
    assert f": {truth.error:.4f} (certified by exact" in out
    assert f"worst query: {truth.text}" in out and "=" in truth.text


def test_cli_not_certified_and_errors(csv_pair, capsys, tmp_path):
    _, syn, (real_path, syn_path, schema) = csv_pair
    assert main(["evaluate", real_path, syn_path, "--queries", "conjunctions", "--time-limit", "1e-6",
                 "--schema", schema]) == 1
    assert "NOT certified" in capsys.readouterr().out
    assert main(["evaluate", real_path, syn_path, "--queries", "cliques:3", "--schema", schema]) == 2
    assert "unknown query class" in capsys.readouterr().err
    bad = tmp_path / "bad.csv"
    syn.drop(columns="sex").to_csv(bad, index=False)
    assert main(["evaluate", real_path, str(bad), "--queries", "parities:2", "--schema", schema]) == 2
    assert "sex" in capsys.readouterr().err
    assert main(["evaluate", real_path, syn_path, "--queries", "parities:2", "--schema", schema,
                 "--plot", str(tmp_path / "p.png")]) == 2
    assert "--plot" in capsys.readouterr().err and not (tmp_path / "p.png").exists()


@pytest.mark.parametrize("domain", [Domain.from_sizes({f"x{i}": 2 for i in range(6)}),
                                    Domain.from_sizes({"a": 3, "b": 2, "c": 2, "d": 2})])
def test_halfspaces_keep_their_best_conjunction_when_cpsat_stops(domain):
    """An uncertified halfspace run still has the best conjunction inside the class as its lower bound."""
    rng = np.random.default_rng(2)
    real, syn = _data(domain, rng, 300, skew=1.0), _data(domain, rng, 200)
    inner = "conjunctions" if all(s == 2 for s in domain.sizes) else "monotone"
    floor = worst_case_error(real, syn, inner).exact_upper
    result = worst_case_error(real, syn, "halfspaces:1", backend="cpsat", work_limit=1e-6)
    truth = brute_max(parse_query_class("halfspaces:1", domain), real, syn)
    assert not result.certified
    assert floor <= result.exact_lower <= truth <= result.exact_upper
    qc = parse_query_class("halfspaces:1", domain)
    assert abs(signed_error(qc, result.query, real, syn)) == result.exact_lower
