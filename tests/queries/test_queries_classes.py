"""Exhaustive contract checks for every query class on small domains.

For each class, plain and complement closed: the signature is injective on
the enumerated class (requirement R0), agrees with evaluation on the
separator points, enumeration matches ``size``, membership is exact,
evaluation matches an independent reference, and the fast answers match
brute-force sums.  Class-specific tests follow.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from synthdp.queries.complement import base_class
from synthdp.queries import (ComplementClosed, Conjunction, Conjunctions, Disjunction, Disjunctions, Halfspace,
                     Halfspaces, MonotoneConjunction, MonotoneConjunctions, Not, Parities, Parity, Workload)
from synthdp.queries.base import QueryClass, binary_feature_columns
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError

D1 = Domain(("a", "b", "c"), (3, 2, 4), (("a0", "a1", "a2"), ("no", "yes"), ("c0", "c1", "c2", "c3")))
D2 = Domain.from_sizes({"w": 2, "x": 2, "y": 2, "z": 2})
D3 = Domain.from_sizes({"p": 5, "q": 3})
D4 = Domain.from_sizes({"s": 3, "t": 2})  # 4 binary features

ADULT_SIZES = {"age": 85, "workclass": 9, "fnlwgt": 100, "education-num": 16, "marital-status": 7,
               "occupation": 15, "relationship": 6, "race": 5, "sex": 2, "capital-gain": 100,
               "capital-loss": 100, "hours-per-week": 99, "native-country": 42, "income>50K": 2}

CASES = {
    "conjunctions-D1": lambda: Conjunctions(D1),
    "conjunctions0-D2": lambda: Conjunctions(D2, min_width=0),
    "marginals1-D1": lambda: Conjunctions.marginals(D1, 1),
    "marginals2-D3": lambda: Conjunctions.marginals(D3, 2),
    "marginals<=2-D2": lambda: Conjunctions.marginals(D2, 2, exact=False),
    "monotone-D1": lambda: MonotoneConjunctions(D1),
    "monotone2-D2": lambda: MonotoneConjunctions(D2, max_width=2),
    "monotone1-D3": lambda: MonotoneConjunctions(D3, max_width=1),
    "disj-conj-D1": lambda: Disjunctions(Conjunctions(D1)),
    "disj-marg2-D3": lambda: Disjunctions(Conjunctions.marginals(D3, 2)),
    "disj-mono-D2": lambda: Disjunctions(MonotoneConjunctions(D2)),
    "disj-mono2-D1": lambda: Disjunctions(MonotoneConjunctions(D1, max_width=2)),
    "parities-D1": lambda: Parities(D1),
    "parities2-D3": lambda: Parities(D3, max_width=2),
    "parities-D2": lambda: Parities(D2),
    "halfspaces-D2": lambda: Halfspaces(D2),
    "halfspaces-D4": lambda: Halfspaces(D4),
    "halfspacesB2-D2small": lambda: Halfspaces(Domain.from_sizes({"u": 2, "v": 2}), weight_bound=2),
    "workload-D1": lambda: Workload(D1, [(0, 2), (1,), (2, 1, 0)]),
    "workload-D2-partial": lambda: Workload(D2, [(3, 1), (1,)]),
    "workload-D3": lambda: Workload.from_names(D3, [("q",), ("p", "q")]),
}


def _build(case: str, closed: bool):
    qc = CASES[case]()
    return ComplementClosed(qc) if closed else qc



def _columns(qc, query) -> list[int]:
    """Feature columns of the literals of a conjunction-like query."""
    if isinstance(query, Conjunction):
        return [int(qc.domain.offsets[a]) + v for a, v in query.literals]
    return list(query.features)


def reference(qc, query, x) -> int:
    """Independent, literal definition of each query type on a 0/1 point ``x``."""
    if isinstance(query, Not):
        return 1 - reference(qc, query.query, x)
    if isinstance(query, (Conjunction, MonotoneConjunction)):
        return int(all(x[c] for c in _columns(qc, query)))
    if isinstance(query, Disjunction):
        return int(any(x[c] for c in _columns(qc, query.inner)))
    if isinstance(query, Parity):
        return sum(int(x[j]) for j in query.features) % 2
    if isinstance(query, Halfspace):
        return int(sum(w * int(v) for w, v in zip(query.weights, x)) >= query.threshold)
    raise TypeError(query)


def all_records(domain: Domain) -> np.ndarray:
    return np.array(list(itertools.product(*map(range, domain.sizes))), dtype=np.int64)


def malformed(qc) -> list:
    """Queries the class must reject: wrong type, shape, order, width or range."""
    base = base_class(qc)
    if isinstance(base, Disjunctions):
        inner = malformed(base.base)
        bad = [Disjunction(q) for q in inner if not isinstance(q, Disjunction)]
        good = next(iter(base.base._enumerate()))
        bad += [good, Disjunction(Parity((0,))), Not(Disjunction(inner[0]))]
    elif isinstance(base, Conjunctions):
        sizes = base.domain.sizes
        bad = [MonotoneConjunction((0,)), Conjunction(((0, sizes[0]),)), Conjunction(((0, -1),)),
               Conjunction(((len(sizes), 0),)), Conjunction(((1, 0), (0, 0))), Conjunction(((0, 0), (0, 1))),
               Conjunction(((0, 1.0),)), Conjunction(((0,),)), Conjunction([(0, 1)]), Conjunction(((0, True),)),
               Conjunction(tuple((a, 0) for a in range(base.max_width + 1)) + ((len(sizes), 0),))]
        if base.min_width > 0:
            bad.append(Conjunction(()))
        if base.min_width > 1:
            bad.append(Conjunction(((0, 0),)))
        if isinstance(base, Workload):
            missing = [m for m in itertools.combinations(range(len(sizes)), 2) if m not in base.marginal_attrs]
            bad += [Conjunction(tuple((a, 0) for a in m)) for m in missing]
    elif isinstance(base, (MonotoneConjunctions, Parities)):
        d = base.n_features
        other = Parity if isinstance(base, MonotoneConjunctions) else MonotoneConjunction
        kind = base.query_type
        bad = [other((0,)), kind((1, 0)), kind((0, 0)), kind((d,)), kind((-1,)), kind((0.0,)), kind([0]),
               kind((True,)), Conjunction(((0, 0),))]
        if base.max_width < d:
            bad.append(kind(tuple(range(base.max_width + 1))))
    elif isinstance(base, Halfspaces):
        d, B = base.n_features, base.weight_bound
        ok = (0,) * d
        bad = [Halfspace(ok[:-1], 0), Halfspace(ok + (0,), 0), Halfspace((B + 1,) + ok[1:], 0),
               Halfspace((-B - 1,) + ok[1:], 0), Halfspace(ok, base.theta_max + 1), Halfspace(ok, base.theta_min - 1),
               Halfspace(ok, 0.0), Halfspace(list(ok), 0), Halfspace((0.5,) + ok[1:], 0), Parity((0,))]
    else:
        raise TypeError(base)
    if isinstance(qc, ComplementClosed):
        bad += [Not(q) for q in bad] + [Not(Not(next(iter(base._enumerate()))))]
    return bad


@pytest.fixture(scope="module", params=[(c, closed) for c in CASES for closed in (False, True)],
                ids=lambda p: f"{p[0]}{'+C' if p[1] else ''}")
def built(request):
    qc = _build(*request.param)
    return qc, qc.enumerate()


def test_enumeration_matches_size_and_contains(built):
    qc, queries = built
    assert len(queries) == qc.size()
    assert len(set(queries)) == len(queries)
    assert all(qc.contains(q) for q in queries)


def test_contains_rejects_malformed(built):
    qc, _ = built
    accepted = [q for q in malformed(qc) if qc.contains(q)]
    assert accepted == []


def test_signature_is_injective(built):
    """Requirement R0: distinct queries (representations) have distinct 0/1 signatures."""
    qc, queries = built
    sep = qc.separator()
    sig = qc.signature(queries)
    assert sig.shape == (len(queries), sep.m)
    assert set(np.unique(sig)) <= {0, 1}
    assert len(np.unique(sig, axis=0)) == len(queries)
    assert sep.argument


def test_signature_equals_evaluation_on_points(built):
    qc, queries = built
    sep = qc.separator()
    if sep.points is None:
        assert isinstance(base_class(qc), Halfspaces)
        return
    assert sep.points.shape == (sep.m, qc.n_features)
    assert set(np.unique(sep.points)) <= {0, 1}
    np.testing.assert_array_equal(qc.evaluate(queries, sep.points), qc.signature(queries))


def test_evaluate_matches_reference(built):
    qc, queries = built
    rng = np.random.default_rng(1)
    points = np.vstack([qc.features(all_records(qc.domain)),
                        rng.integers(0, 2, size=(12, qc.n_features), dtype=np.uint8)])
    got = qc.evaluate(queries, points)
    want = np.array([[reference(base_class(qc), q, x) for x in points] for q in queries], dtype=np.uint8)
    np.testing.assert_array_equal(got, want)


def test_answer_matches_brute_force(built):
    qc, queries = built
    rng = np.random.default_rng(2)
    codes = np.column_stack([rng.integers(0, s, size=60) for s in qc.domain.sizes])
    weights = rng.integers(-7, 8, size=60)
    brute = qc.evaluate(queries, qc.features(codes)).astype(np.int64) @ weights
    got = qc.answer(queries, codes, weights)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, brute)


def test_anchor_and_complement(built):
    qc, queries = built
    base = base_class(qc)
    anchor = base.anchor()
    if anchor is not None:
        point, value = anchor
        assert (base.evaluate(list(base._enumerate()), point[None, :])[:, 0] == value).all()
    if qc.complement_closed:
        rng = np.random.default_rng(3)
        points = rng.integers(0, 2, size=(16, qc.n_features), dtype=np.uint8)
        comp = [qc.complement(q) for q in queries]
        assert all(qc.contains(c) for c in comp)
        assert [qc.complement(c) for c in comp] == queries
        np.testing.assert_array_equal(qc.evaluate(comp, points), 1 - qc.evaluate(queries, points))
    else:
        with pytest.raises(InputError):
            qc.complement(queries[0])


def test_dual_separator_separates_records(built):
    qc, _ = built
    records = all_records(qc.domain)
    dual = qc.dual_separator()
    coords = np.array([[r[a] == v for a, v in dual] for r in records], dtype=np.uint8).reshape(len(records), -1)
    assert len(np.unique(coords, axis=0)) == len(records)


def test_describe_is_readable(built):
    qc, queries = built
    texts = [qc.describe(q) for q in queries]
    assert all(isinstance(t, str) and t for t in texts)
    assert len(set(texts)) == len(texts)


# ----- separator sizes ----------------------------------------------------------
ADULT = Domain.from_sizes(ADULT_SIZES)
ADULT_D = len(binary_feature_columns(ADULT))


def test_adult_binary_feature_count():
    assert ADULT_D == sum(ADULT_SIZES.values()) - 2 * 2 + 2 == 586


@pytest.mark.parametrize("qc, m", [
    (MonotoneConjunctions(ADULT), ADULT_D),
    (MonotoneConjunctions(ADULT, max_width=3), ADULT_D),
    (Parities(ADULT, max_width=2), ADULT_D),
    (Disjunctions(Conjunctions.marginals(ADULT, 3)), 67),
    (Disjunctions(MonotoneConjunctions(ADULT)), ADULT_D),
    (Halfspaces(ADULT), ADULT_D * 2 + (2 * ADULT_D + 1).bit_length()),
    (Halfspaces(ADULT, weight_bound=2), ADULT_D * 3 + (4 * ADULT_D + 1).bit_length()),
    (Halfspaces(ADULT, weight_bound=4), ADULT_D * 4 + (8 * ADULT_D + 1).bit_length()),
    (Workload.from_names(ADULT, [("age", "sex"), ("sex", "race")]), 7 + 2 + 3),
], ids=lambda v: getattr(v, "name", str(v)))
def test_separator_sizes(qc, m):
    assert qc.separator().m == m
    closed = qc if qc.complement_closed else ComplementClosed(qc)
    assert closed.separator().m == m + (0 if qc.complement_closed else 1)


def test_halfspace_bits_formula():
    assert Halfspaces(ADULT).separator().m == 2 * 586 + 11 == 1183


# ----- class-specific -------------------------------------------------------------
def test_feature_set_sizes_and_widths():
    assert MonotoneConjunctions(D1).size() == 2 ** 8
    assert MonotoneConjunctions(D1, max_width=2).size() == 1 + 8 + 28
    assert Parities(D2, max_width=0).enumerate() == [Parity(())]
    assert MonotoneConjunctions(D2).name == "monotone" and Parities(D2, max_width=3).name == "parities:3"
    for bad in (-1, 9, 1.5):
        with pytest.raises(InputError):
            MonotoneConjunctions(D1, max_width=bad)


def test_binary_feature_descriptions():
    mono = MonotoneConjunctions(D1)
    # features: a=a0, a=a1, a=a2, b=yes (binary attribute: one feature), c=c0..c3
    assert mono.describe(MonotoneConjunction((0, 3, 7))) == "a=a0 AND b=yes AND c=c3"
    assert mono.describe(MonotoneConjunction(())) == "TRUE"
    assert Parities(D1).describe(Parity((3, 4))) == "b=yes XOR c=c0"
    disj = Disjunctions(Conjunctions(D1))
    assert disj.describe(Disjunction(Conjunction(((0, 2), (2, 1))))) == "a=a2 OR c=c1"
    assert Disjunctions(MonotoneConjunctions(D1)).describe(Disjunction(MonotoneConjunction(()))) == "FALSE"
    assert ComplementClosed(disj).describe(Not(Disjunction(Conjunction(((1, 0),))))) == "NOT (b=no)"
    half = Halfspaces(D1, weight_bound=2)
    w = (0, -2, 0, 1, 0, 0, 0, -1)
    assert half.describe(Halfspace(w, 1)) == "- 2*[a=a1] + [b=yes] - [c=c3] >= 1"
    assert half.describe(Halfspace((0,) * 8, -3)) == "0 >= -3"


def test_disjunction_is_de_morgan_ofbase_class():
    """q(x) = 1 - c(1 - x) on every 0/1 point, including invalid records."""
    for base in (Conjunctions(D1), MonotoneConjunctions(D1)):
        disj = Disjunctions(base)
        inner = base.enumerate()
        points = np.array(list(itertools.product((0, 1), repeat=base.n_features)), dtype=np.uint8)
        np.testing.assert_array_equal(disj.evaluate([Disjunction(c) for c in inner], points),
                                      1 - base.evaluate(inner, 1 - points))


def test_disjunctions_reject_other_bases():
    with pytest.raises(InputError):
        Disjunctions(Parities(D1))


def test_halfspace_points_cannot_separate_representations():
    """(w, theta) = (1, 1) and (2, 2) are one function on all of Z^d but two feasible solutions."""
    dom = Domain.from_sizes({"u": 2, "v": 2})
    half = Halfspaces(dom, weight_bound=2)
    h1, h2 = Halfspace((1, 0), 1), Halfspace((2, 0), 2)
    assert half.contains(h1) and half.contains(h2) and h1 != h2
    box = np.array(list(itertools.product(range(-6, 7), repeat=2)), dtype=np.int64)
    np.testing.assert_array_equal(box @ np.array(h1.weights) >= h1.threshold, box @ np.array(h2.weights) >= h2.threshold)
    # ... so every point-evaluation signature coincides, while the bit signature tells them apart.
    sig = half.signature([h1, h2])
    assert (sig[0] != sig[1]).any()
    # With B = 1 already: [x_1 >= 0] and [x_1 >= -1] agree on every 0/1 point.
    b1 = Halfspaces(dom)
    same = [Halfspace((1, 0), 0), Halfspace((1, 0), -1)]
    cube = np.array(list(itertools.product((0, 1), repeat=2)), dtype=np.uint8)
    assert (b1.evaluate(same, cube)[0] == b1.evaluate(same, cube)[1]).all()
    assert (b1.signature(same)[0] != b1.signature(same)[1]).any()
    assert Halfspaces(dom).separator().points is None


def test_halfspace_signature_decodes_representation():
    half = Halfspaces(D4, weight_bound=3)
    queries = half.enumerate()[::97]
    sig = half.signature(queries).astype(np.int64)
    d, wb = half.n_features, half.weight_bits
    weights = (sig[:, : d * wb].reshape(-1, d, wb) << np.arange(wb)).sum(axis=2) - 3
    theta = (sig[:, d * wb:] << np.arange(half.threshold_bits)).sum(axis=1) + half.theta_min
    assert [Halfspace(tuple(map(int, w)), int(t)) for w, t in zip(weights, theta)] == queries


def test_halfspace_range_and_complement():
    half = Halfspaces(D2)
    assert (half.theta_min, half.theta_max) == (-4, 5)
    assert half.size() == 3 ** 4 * 10
    assert half.complement(Halfspace((1, -1, 0, 1), 2)) == Halfspace((-1, 1, 0, -1), -1)
    cube = half.features(all_records(D2))
    always = half.evaluate([Halfspace((1, 1, 1, 1), half.theta_min), Halfspace((1, 1, 1, 1), half.theta_max)], cube)
    assert always[0].all() and not always[1].any()
    with pytest.raises(InputError):
        Halfspaces(D2, weight_bound=0)


def test_workload_cells_and_order():
    work = Workload.from_names(D1, [("c", "a"), ("b",), ("a", "b", "c")])
    assert work.marginal_attrs == ((0, 2), (1,), (0, 1, 2))
    assert work.n_cells == 12 + 2 + 24 == work.size()
    cells = work.enumerate()
    assert [work.query_at(i) for i in range(work.n_cells)] == cells
    assert work.query_at(np.int64(12)) == Conjunction(((1, 0),))
    rng = np.random.default_rng(4)
    codes = np.column_stack([rng.integers(0, s, size=300) for s in D1.sizes])
    weights = rng.integers(-3, 10, size=300)
    flat = work.cell_answers(codes, weights)
    assert flat.dtype == np.int64 and flat.shape == (work.n_cells,)
    np.testing.assert_array_equal(flat, Conjunctions(D1).answer(cells, codes, weights))
    tables = work.marginals(codes, weights)
    assert [t.shape for t in tables] == [(3, 4), (2,), (3, 2, 4)]
    assert all(t.sum() == weights.sum() for t in tables)
    for bad in (-1, work.n_cells, 1.0):
        with pytest.raises(IndexError):
            work.query_at(bad)


def test_workload_separator_uses_only_mentioned_attributes():
    work = Workload(D1, [(0,), (0, 2)])  # b is never mentioned
    assert work.separator().m == 2 + 3
    assert work.signature(work.enumerate()).shape == (work.size(), 5)
    full = Conjunctions(D1).separator()
    assert work.separator().m < full.m


def test_workload_errors():
    with pytest.raises(InputError, match="'nope'"):
        Workload.from_names(D1, [("a",), ("a", "nope")])
    with pytest.raises(InputError, match="repeats"):
        Workload.from_names(D1, [("a", "b"), ("b", "a")])
    with pytest.raises(InputError, match="distinct"):
        Workload(D1, [(0, 0)])
    with pytest.raises(InputError, match="distinct"):
        Workload(D1, [(3,)])
    for entry in ("ab", 3):
        with pytest.raises(InputError, match="list of attribute names"):
            Workload.from_names(D1, [entry])
    with pytest.raises(InputError, match="at least one"):
        Workload(D1, [])


@pytest.mark.parametrize("case", list(CASES))
def test_brute_force_oracle_certifies(case):
    """The closed class plugs into the oracle contract: certified optimum equals the enumerated minimum."""
    from synthdp.oracles import OPTIMAL, DataInstance, QueryInstance, get_oracle

    qc = CASES[case]()
    qc = qc if qc.complement_closed else ComplementClosed(qc)
    rng = np.random.default_rng(5)
    codes = np.column_stack([rng.integers(0, s, size=30) for s in qc.domain.sizes])
    inst = QueryInstance.build(qc, codes, rng.integers(-4, 5, size=30), rng.integers(-3, 4, size=qc.separator().m))
    result = get_oracle("brute").solve_query(inst)
    assert result.status == OPTIMAL
    queries = qc.enumerate()
    assert result.objective == min(inst.objective(q) for q in queries)
    played = queries[:: max(1, len(queries) // 7)]
    data = get_oracle("brute").solve_data(DataInstance.build(qc, played, rng.integers(-3, 4, size=len(played))))
    assert data.status == OPTIMAL


def test_each_class_says_which_marginals_determine_its_queries_and_which_attributes_a_query_reads():
    """The class, not its caller, knows how wide its queries read (brute force: every query of small classes)."""
    d = Domain(("a", "b", "c", "d"), (2, 3, 2, 2))
    assert Conjunctions(d, min_width=0, max_width=2).marginal_widths() == range(1, 3)
    assert ComplementClosed(Conjunctions.marginals(d, 3)).marginal_widths() == range(3, 4)
    assert Disjunctions(Conjunctions(d, max_width=2)).marginal_widths() == range(2, 3)
    assert MonotoneConjunctions(d, max_width=6).marginal_widths() == range(4, 5)  # 6 features read <= d attributes
    assert Halfspaces(d).marginal_widths() is None and Halfspaces(d).attributes_read is None
    records = np.array(list(itertools.product(*(range(s) for s in d.sizes))))
    for qc in (Conjunctions(d, max_width=2), Parities(d, max_width=2),
               Disjunctions(MonotoneConjunctions(d, max_width=2)),
               ComplementClosed(Disjunctions(Conjunctions(d, max_width=2)))):
        for q in qc.enumerate():
            attrs = qc.attributes_of(q)
            assert len(attrs) <= qc.attributes_read and list(attrs) == sorted(set(attrs))
            # the query is a function of those attributes: records that agree on them get the same answer
            seen: dict[tuple, int] = {}
            for record, answer in zip(records, qc.evaluate([q], qc.features(records))[0]):
                assert seen.setdefault(tuple(record[list(attrs)]), answer) == answer
    with pytest.raises(InputError, match="cannot tell which attributes"):
        QueryClass.attributes_of(Halfspaces(d), object())  # the default, for a class that does not say
