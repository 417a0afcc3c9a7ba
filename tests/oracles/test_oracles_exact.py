"""The ``exact`` backend against brute force on hundreds of random small instances.

Every comparison goes through the public, certifying entry points
(``solve_query`` / ``solve_data``): the exact backend must prove the same
optimum value as exhaustive enumeration, report a bound equal to it, and
under a tiny work or time limit either FAIL or still be right.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import synthdp.oracles.exact.query as exact_query
from synthdp.oracles.base import DataInstance, Limits, QueryInstance
from synthdp.oracles.brute import BruteForceOracle
from synthdp.oracles.exact import ExactSearchOracle
from synthdp.queries.base import binary_feature_columns
from synthdp.queries.complement import ComplementClosed, Not
from synthdp.queries.conjunctions import Conjunction, Conjunctions
from synthdp.queries.monotone import MonotoneConjunctions
from synthdp.queries.parities import Parities
from synthdp.queries.workload import Workload
from synthdp.core.domain import Domain

BRUTE = BruteForceOracle()
FAMILIES = ["marginals", "widths", "unbounded", "workload", "monotone"]


# ----- random instances ---------------------------------------------------------
def random_domain(rng: np.random.Generator, max_attrs: int = 4, max_size: int = 4) -> Domain:
    sizes = rng.integers(1, max_size + 1, int(rng.integers(1, max_attrs + 1)))
    return Domain(tuple(f"a{i}" for i in range(len(sizes))), tuple(int(s) for s in sizes))


def random_class(rng: np.random.Generator, family: str, domain: Domain):
    n = len(domain)
    if family == "marginals":
        return Conjunctions.marginals(domain, int(rng.integers(1, n + 1)))
    if family == "widths":
        low = int(rng.integers(0, n + 1))
        return Conjunctions(domain, min_width=low, max_width=int(rng.integers(low, n + 1)))
    if family == "unbounded":
        return Conjunctions(domain, min_width=int(rng.integers(0, 2)))
    if family == "workload":
        sets = [s for k in range(1, n + 1) for s in itertools.combinations(range(n), k)]
        pick = rng.choice(len(sets), size=min(len(sets), int(rng.integers(1, 4))), replace=False)
        return Workload(domain, [sets[i] for i in pick])
    d = len(binary_feature_columns(domain))
    return MonotoneConjunctions(domain, max_width=int(rng.integers(0, d + 1)))


def random_codes(rng: np.random.Generator, domain: Domain, rows: int) -> np.ndarray:
    return np.stack([rng.integers(0, s, rows) for s in domain.sizes], axis=1).reshape(rows, len(domain))


def random_query_instance(rng: np.random.Generator, family: str, closed: bool, scale: int = 6,
                          max_rows: int = 40) -> QueryInstance:
    """Small coefficient ranges on purpose: many ties."""
    domain = random_domain(rng)
    qc = random_class(rng, family, domain)
    qc = ComplementClosed(qc) if closed else qc
    rows = int(rng.integers(0, max_rows))
    weights = rng.integers(-scale, scale + 1, rows)
    sep = rng.integers(-scale, scale + 1, qc.separator().m)
    return QueryInstance.build(qc, random_codes(rng, domain, rows), weights, sep)


def random_data_instance(rng: np.random.Generator, family: str, closed: bool, scale: int = 4, max_attrs: int = 5,
                         max_size: int = 4, max_queries: int = 12) -> DataInstance:
    domain = random_domain(rng, max_attrs=max_attrs, max_size=max_size)
    base = random_class(rng, family, domain)
    pool = list(base.enumerate())
    size = min(len(pool), int(rng.integers(0, max_queries)))
    queries = [pool[i] for i in rng.choice(len(pool), size=size, replace=False)]
    if closed:
        queries = [Not(q) if flip else q for q, flip in zip(queries, rng.random(len(queries)) < 0.4)]
    qc = ComplementClosed(base) if closed else base
    weights = rng.integers(-scale, scale + 1, len(queries))
    rho = rng.integers(-scale, scale + 1, len(qc.dual_separator()))
    return DataInstance.build(qc, queries, weights, rho)


def assert_same_optimum(result, reference) -> None:
    assert reference.proven
    assert result.proven, result.message
    assert result.objective == reference.objective
    assert result.bound == result.objective


# ----- query player ------------------------------------------------------------
@pytest.mark.parametrize("closed", [False, True])
@pytest.mark.parametrize("family", FAMILIES)
def test_query_player_matches_brute_force(family, closed):
    rng = np.random.default_rng([1, FAMILIES.index(family), closed])
    oracle = ExactSearchOracle()
    for _ in range(40):
        inst = random_query_instance(rng, family, closed)
        assert_same_optimum(oracle.solve_query(inst), BRUTE.solve_query(inst))


@pytest.mark.parametrize("method", ["tables", "branch-and-bound"])
@pytest.mark.parametrize("family", ["marginals", "widths", "unbounded"])
def test_both_query_searches_match_brute_force(family, method):
    rng = np.random.default_rng([2, ["marginals", "widths", "unbounded"].index(family), len(method)])
    oracle = ExactSearchOracle(method=method)
    for _ in range(30):
        inst = random_query_instance(rng, family, closed=bool(rng.integers(2)))
        assert_same_optimum(oracle.solve_query(inst), BRUTE.solve_query(inst))


def test_sparse_tables_match_brute_force(monkeypatch):
    """Tables above ``DENSE_CELLS`` are read from occupied cells plus the best empty cell."""
    monkeypatch.setattr(exact_query, "DENSE_CELLS", 1)
    rng = np.random.default_rng(3)
    oracle = ExactSearchOracle(method="tables")
    for family in ["marginals", "widths", "workload"] * 15:
        inst = random_query_instance(rng, family, closed=bool(rng.integers(2)))
        assert_same_optimum(oracle.solve_query(inst), BRUTE.solve_query(inst))


def test_medium_instances_with_many_nodes():
    """More rows and attributes, so that pruning and the coverage bound do real work."""
    rng = np.random.default_rng(4)
    domain = Domain(tuple("abcdef"), (3, 2, 4, 2, 3, 2))
    classes = [Conjunctions(domain), Conjunctions.marginals(domain, 3), MonotoneConjunctions(domain)]
    for qc in classes:
        for method in ["tables", "branch-and-bound"]:
            qc_closed = ComplementClosed(qc)
            codes = random_codes(rng, domain, 400)
            weights = np.where(rng.random(400) < 0.8, -rng.integers(1, 20, 400), rng.integers(1, 300, 400))
            inst = QueryInstance.build(qc_closed, codes, weights, rng.integers(-300, 301, qc_closed.separator().m))
            assert_same_optimum(ExactSearchOracle(method=method).solve_query(inst), BRUTE.solve_query(inst))


def test_additive_separator_model():
    """``base + sum of item deltas`` equals the signature objective for random queries of every class."""
    rng = np.random.default_rng(5)
    for family in FAMILIES * 10:
        qc = random_class(rng, family, random_domain(rng))
        model = exact_query.item_model(qc)
        eta = rng.integers(-9, 10, qc.separator().m)
        base, delta = exact_query.separator_terms(qc, model, eta)
        pool = list(qc.enumerate())
        for q in (pool[i] for i in rng.choice(len(pool), size=min(len(pool), 10), replace=False)):
            items = exact_query_items(qc, q)
            assert base + delta[list(items)].sum() == int(qc.signature([q])[0].astype(np.int64) @ eta)


def exact_query_items(qc, query) -> tuple[int, ...]:
    """Item indices of a query under :func:`exact_query.item_model`."""
    if isinstance(query, Conjunction):
        offsets = np.concatenate([[0], np.cumsum(qc.domain.sizes)])
        return tuple(int(offsets[a] + v) for a, v in query.literals)
    return query.features


# ----- data player -------------------------------------------------------------
@pytest.mark.parametrize("closed", [False, True])
@pytest.mark.parametrize("family", FAMILIES)
def test_data_player_matches_brute_force(family, closed):
    rng = np.random.default_rng([6, FAMILIES.index(family), closed])
    oracle = ExactSearchOracle()
    for _ in range(40):
        inst = random_data_instance(rng, family, closed)
        assert_same_optimum(oracle.solve_data(inst), BRUTE.solve_data(inst))


def test_data_player_on_larger_instances():
    """Deeper trees, wider domains, many queries: the compiled search prunes and backtracks for real."""
    rng = np.random.default_rng(61)
    oracle = ExactSearchOracle()
    nodes = []
    for family in ["marginals", "workload"] * 12:
        inst = random_data_instance(rng, family, closed=True, scale=9, max_attrs=7, max_size=5, max_queries=150)
        result = oracle.solve_data(inst)
        assert_same_optimum(result, BRUTE.solve_data(inst))
        nodes.append(result.nodes)
    assert max(nodes) > 7, nodes  # a single dive visits at most 7 nodes (attributes): it backtracked


def test_wide_domains_with_idle_values_match_brute_force():
    """Attributes of up to 12 values that few queries mention: the search explores one idle value per node."""
    rng = np.random.default_rng(63)
    oracle = ExactSearchOracle()
    for family in ["workload", "marginals"] * 15:
        inst = random_data_instance(rng, family, closed=True, scale=3, max_attrs=4, max_size=12, max_queries=10)
        assert_same_optimum(oracle.solve_data(inst), BRUTE.solve_data(inst))


def test_idle_values_share_one_subtree():
    """Value 0 of a wide first attribute carries the queries; values 1..11 are idle and root identical subtrees."""
    domain = Domain(("wide", "b", "c"), (12, 3, 3))
    qc = ComplementClosed(Conjunctions(domain, min_width=1, max_width=3))
    heavy = [Conjunction(((0, 0), (1, b), (2, c))) for b in range(3) for c in range(3)]
    light = [Conjunction(((1, b), (2, c))) for b in range(3) for c in range(3)]
    # Value 0 is penalised; the light queries, charged to "c" with "b" still free, keep every idle
    # value's bound (9 + 8 + 7 > 9) above the best record, so bounds alone would visit all eleven.
    # The single-literal query makes "wide" the heaviest attribute, so it is branched on first.
    weights = np.array([-50] * 9 + [1, 2, 3, 4, 5, 6, 7, 8, 9] + [-200])
    queries = heavy + light + [Conjunction(((0, 0),))]
    inst = DataInstance.build(qc, queries, weights, np.zeros(len(qc.dual_separator()), dtype=np.int64))
    result = ExactSearchOracle().solve_data(inst)
    assert_same_optimum(result, BRUTE.solve_data(inst))
    assert result.solution[0] == 1  # the first idle value in visiting order (ties: smaller value)
    assert result.nodes <= 2 * (1 + 3), result.nodes  # value 0 and one idle value, each a 3-value subtree


def test_paused_and_resumed_search_gives_the_same_answer(monkeypatch):
    """The search runs in slices between limit checks; slicing must not change the answer."""
    import synthdp.oracles.exact.data as exact_data

    rng = np.random.default_rng(62)
    instances = [random_data_instance(rng, "marginals", closed=True, scale=9, max_attrs=6, max_size=5, max_queries=40)
                 for _ in range(15)]
    whole = [ExactSearchOracle().solve_data(inst) for inst in instances]
    monkeypatch.setattr(exact_data, "_SLICE", 1)
    for inst, reference in zip(instances, whole):
        sliced = ExactSearchOracle().solve_data(inst)
        assert sliced.objective == reference.objective and sliced.proven
        np.testing.assert_array_equal(sliced.solution, reference.solution)


def test_solve_data_many_matches_single_calls():
    rng = np.random.default_rng(7)
    oracle = ExactSearchOracle()
    for family in FAMILIES * 4:
        inst = random_data_instance(rng, family, closed=True)
        rhos = rng.integers(-4, 5, (6, len(inst.rho)))
        batch = oracle.solve_data_many(inst.query_class, list(inst.queries), inst.weights, rhos)
        records = oracle.maximize_many(inst.query_class, list(inst.queries), inst.weights, rhos)
        for rho, result, record in zip(rhos, batch, records):
            single = DataInstance.build(inst.query_class, inst.queries, inst.weights, rho)
            assert_same_optimum(result, BRUTE.solve_data(single))
            np.testing.assert_array_equal(result.solution, oracle.solve_data(single).solution)
            np.testing.assert_array_equal(record, result.solution)


def test_data_player_is_deterministic():
    rng = np.random.default_rng(8)
    oracle = ExactSearchOracle()
    for family in FAMILIES * 4:
        inst = random_data_instance(rng, family, closed=True, scale=1)
        first, second = oracle.solve_data(inst), oracle.solve_data(inst)
        np.testing.assert_array_equal(first.solution, second.solution)


# ----- limits, refusals --------------------------------------------------------
def test_tiny_work_limit_fails_or_is_right():
    rng = np.random.default_rng(9)
    oracle = ExactSearchOracle()
    outcomes = []
    for family in FAMILIES * 12:
        inst = random_query_instance(rng, family, closed=True)
        result = oracle.solve_query(inst, Limits(work_limit=1))
        outcomes.append(result.failed)
        if not result.failed:
            assert result.objective == BRUTE.solve_query(inst).objective
        data = random_data_instance(rng, family, closed=True)
        result = oracle.solve_data(data, Limits(work_limit=1))
        outcomes.append(result.failed)
        if not result.failed:
            assert result.objective == BRUTE.solve_data(data).objective
    assert any(outcomes) and not all(outcomes)


@pytest.mark.parametrize("method", ["tables", "branch-and-bound"])
def test_unproven_query_bounds_are_valid(method):
    """A stopped search reports a lower bound on the true minimum."""
    rng = np.random.default_rng([10, len(method)])
    oracle = ExactSearchOracle(method=method)
    for family in ["widths", "unbounded", "monotone"] * 15:
        inst = random_query_instance(rng, family, closed=False, max_rows=60)
        raw = oracle._minimize(inst.query_class, inst.codes, inst.weights, inst.separator_weights, Limits(work_limit=2))
        if raw.bound is not None:
            assert raw.bound <= BRUTE.solve_query(inst).objective


def test_unproven_data_bounds_are_valid():
    """A stopped data search still returns a record, with an upper bound on the true maximum."""
    rng = np.random.default_rng(13)
    oracle = ExactSearchOracle()
    for family in FAMILIES * 10:
        inst = random_data_instance(rng, family, closed=True)
        result = oracle.solve_data(inst, Limits(work_limit=1))
        best = BRUTE.solve_data(inst).objective
        assert result.solution is not None and result.objective <= best <= result.bound


def test_time_limit_fails_cleanly():
    rng = np.random.default_rng(11)
    inst = random_query_instance(rng, "unbounded", closed=True)
    result = ExactSearchOracle().solve_query(inst, Limits(time_limit=0.0))
    assert result.failed and result.backend_status == "time limit"
    data = random_data_instance(rng, "marginals", closed=True, max_queries=40)
    while not data.queries:
        data = random_data_instance(rng, "marginals", closed=True, max_queries=40)
    result = ExactSearchOracle().solve_data(data, Limits(time_limit=0.0))
    assert result.failed and result.backend_status == "time limit"


def test_refuses_unsupported_and_huge_instances():
    rng = np.random.default_rng(12)
    domain = random_domain(rng)
    oracle = ExactSearchOracle()
    parity = QueryInstance.build(Parities(domain), random_codes(rng, domain, 5), np.ones(5))
    assert not oracle.supports(Parities(domain))
    assert oracle.solve_query(parity).failed
    qc = Conjunctions(domain)
    huge = QueryInstance.build(qc, random_codes(rng, domain, 3), np.full(3, 2**60))
    result = oracle.solve_query(huge)
    assert result.failed and "2**53" in result.message
