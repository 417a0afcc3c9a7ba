"""Solver backends (CP-SAT, CBC, MaxSAT) against brute force, and their failure semantics.

Every backend that reports OPTIMAL must reach the brute-force optimum on
random small instances of every class family, for both players; without
limits, every supported instance must be proven.  Limits must give FAIL,
never a wrong answer, and the watchdog must kill at the deadline.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import time
import zlib

import numpy as np
import pytest

from synthdp.oracles import get_oracle
from synthdp.oracles.base import DataInstance, Limits, QueryInstance
from synthdp.oracles.brute import BruteForceOracle
from synthdp.oracles.cbc import _parse_log
from synthdp.oracles.encodings.common import weighted_points
from synthdp.oracles.model import Card, Clause, Linear, Xor, linearize, split_xor, xor_clauses
from synthdp.oracles.watchdog import TimedOut, run_with_deadline
from synthdp.queries import (ComplementClosed, Conjunctions, Disjunctions, Halfspaces, MonotoneConjunctions, Not,
                     Parities, Workload)
from synthdp.queries.base import QueryClass
from synthdp.queries.complement import base_class
from synthdp.core.domain import Domain

BACKENDS = ("cpsat", "cbc", "maxsat")
#: Random instances (each: one query-player and one data-player problem) per family and backend.
QUICK = {"cpsat": 100, "cbc": 100, "maxsat": 100}
SWEEP = 400
BRUTE = BruteForceOracle()


# ----- random classes and instances ---------------------------------------------------
def _domain(rng: np.random.Generator, n_attrs: tuple[int, int] = (1, 4), sizes: tuple[int, int] = (1, 4)) -> Domain:
    """A small domain (sizes may be 1); at least one attribute has two or more values."""
    k = int(rng.integers(*n_attrs, endpoint=True))
    s = rng.integers(*sizes, endpoint=True, size=k)
    s[rng.integers(k)] = max(2, s[0])
    return Domain(tuple(f"a{i}" for i in range(k)), tuple(int(v) for v in s))


def _maybe_closed(rng: np.random.Generator, qc: QueryClass) -> QueryClass:
    return ComplementClosed(qc) if rng.random() < 0.5 else qc


def _conjunctions(rng):
    dom = _domain(rng)
    top = int(rng.integers(0, len(dom), endpoint=True))
    return _maybe_closed(rng, Conjunctions(dom, min_width=int(rng.integers(0, top, endpoint=True)), max_width=top))


def _marginals(rng):
    dom = _domain(rng)
    return ComplementClosed(Conjunctions.marginals(dom, int(rng.integers(1, len(dom), endpoint=True))))


def _workload(rng):
    dom = _domain(rng, (2, 4))
    subsets = [s for w in range(1, len(dom) + 1) for s in itertools.combinations(range(len(dom)), w)]
    pick = rng.choice(len(subsets), size=int(rng.integers(1, min(4, len(subsets)), endpoint=True)), replace=False)
    return _maybe_closed(rng, Workload(dom, [subsets[i] for i in pick]))


def _monotone(rng):
    dom = _domain(rng)
    d = MonotoneConjunctions(dom).n_features
    return _maybe_closed(rng, MonotoneConjunctions(dom, max_width=None if rng.random() < 0.4 else
                                                   int(rng.integers(0, d, endpoint=True))))


def _disjunctions(rng):
    dom = _domain(rng)
    if rng.random() < 0.5:
        base = Conjunctions(dom, max_width=int(rng.integers(1, len(dom), endpoint=True)))
    else:
        base = MonotoneConjunctions(dom, max_width=int(rng.integers(0, MonotoneConjunctions(dom).n_features,
                                                                    endpoint=True)))
    return _maybe_closed(rng, Disjunctions(base))


def _parities(rng):
    dom = _domain(rng)
    d = Parities(dom).n_features
    return _maybe_closed(rng, Parities(dom, max_width=None if rng.random() < 0.4 else
                                       int(rng.integers(0, d, endpoint=True))))


def _halfspaces(rng):
    """``B = 1`` over at most 4 binary features (natively complement-closed)."""
    while True:
        dom = _domain(rng, (1, 3), (1, 3))
        if Halfspaces(dom).n_features <= 4:
            return Halfspaces(dom)


FAMILIES = {
    "conjunctions": _conjunctions,
    "marginals+complements": _marginals,
    "workload": _workload,
    "monotone": _monotone,
    "disjunctions": _disjunctions,
    "parities": _parities,
    "halfspaces": _halfspaces,
}


def _query_instance(rng, qc: QueryClass) -> QueryInstance:
    """Up to 8 rows (possibly repeated), weights in -4..4 (many ties), separator weights with zeros."""
    n = int(rng.integers(0, 8, endpoint=True))
    codes = np.stack([rng.integers(0, s, n) for s in qc.domain.sizes], axis=1).reshape(n, len(qc.domain))
    m = qc.separator().m
    sep = rng.integers(-3, 3, m, endpoint=True) * (rng.random(m) < 0.7)
    return QueryInstance.build(qc, codes, rng.integers(-4, 4, n, endpoint=True), sep)


def _data_instance(rng, qc: QueryClass) -> DataInstance:
    """Up to 6 queries of the class (repeats possible), weights in -4..4, noise in -2..2."""
    pool = qc.enumerate()
    k = int(rng.integers(0, 6, endpoint=True))
    queries = [pool[i] for i in rng.integers(0, len(pool), k)]
    rho = rng.integers(-2, 2, len(qc.dual_separator()), endpoint=True)
    return DataInstance.build(qc, queries, rng.integers(-4, 4, k, endpoint=True), rho)



def _check_against_brute(family: str, backend: str, n: int, seed: int) -> None:
    oracle = get_oracle(backend)
    rng = np.random.default_rng(seed)
    checked, errors = 0, []
    for i in range(n):
        qc = FAMILIES[family](rng)
        qi, di = _query_instance(rng, qc), _data_instance(rng, qc)
        if not oracle.supports(base_class(qc)):
            assert backend == "maxsat" and family == "halfspaces"
            continue
        for player, inst, solve, ref_solve in (("query", qi, oracle.solve_query, BRUTE.solve_query),
                                               ("data", di, oracle.solve_data, BRUTE.solve_data)):
            ref, res = ref_solve(inst), solve(inst)
            assert ref.proven
            if not res.proven:
                errors.append(f"#{i} {qc.name} {player}: not proven ({res.backend_status}: {res.message})")
            elif res.objective != ref.objective:
                errors.append(f"#{i} {qc.name} {player}: objective {res.objective} != brute force {ref.objective}")
            elif player == "query" and not qc.contains(res.solution):
                errors.append(f"#{i} {qc.name}: {res.solution!r} is not in the class")
            checked += 1
    assert not errors, f"{backend} on {family} (seed {seed}):\n" + "\n".join(errors[:10])
    assert checked or backend == "maxsat"


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("backend", BACKENDS)
def test_backend_matches_brute_force(backend, family):
    _check_against_brute(family, backend, QUICK[backend], seed=zlib.crc32(f"{backend}/{family}".encode()))


@pytest.mark.slow
@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("backend", BACKENDS)
def test_backend_matches_brute_force_sweep(backend, family):
    _check_against_brute(family, backend, SWEEP, seed=zlib.crc32(f"sweep/{backend}/{family}".encode()))


def test_maxsat_declines_halfspaces():
    """RC2 has no pseudo-Boolean encoding here: it must say so, not return garbage."""
    rng = np.random.default_rng(0)
    qc = Halfspaces(Domain(("a", "b"), (2, 2)))
    oracle = get_oracle("maxsat")
    assert not oracle.supports(qc)
    result = oracle.solve_query(_query_instance(rng, qc))
    assert result.failed and result.backend_status == "unsupported"


# ----- failure semantics ----------------------------------------------------------------
def _marginals_domain(n_attrs: int, size: int) -> tuple[Domain, np.random.Generator]:
    return Domain(tuple(f"a{i}" for i in range(n_attrs)), (size,) * n_attrs), np.random.default_rng(7)


def _marginal_query(n_attrs: int, size: int, rows: int, closed: bool) -> QueryInstance:
    """3-way marginals on a uniform domain with random rows and weights.

    (12, 10, 1000, closed) takes CP-SAT about 5 s: far beyond the limits tested.
    """
    dom, rng = _marginals_domain(n_attrs, size)
    qc = Conjunctions.marginals(dom, 3)
    qc = ComplementClosed(qc) if closed else qc
    codes = np.stack([rng.integers(0, size, rows) for _ in range(n_attrs)], axis=1)
    return QueryInstance.build(qc, codes, rng.integers(-5, 5, rows, endpoint=True),
                               rng.integers(-20, 20, qc.separator().m, endpoint=True))


def _marginal_data(n_attrs: int, size: int, n_queries: int) -> DataInstance:
    """The data player against ``n_queries`` random complemented or plain 3-way cells."""
    dom, rng = _marginals_domain(n_attrs, size)
    base = Conjunctions.marginals(dom, 3)
    pool = list(base._enumerate())
    queries = [pool[i] if rng.random() < 0.5 else Not(pool[i]) for i in rng.choice(len(pool), n_queries)]
    qc = ComplementClosed(base)
    return DataInstance.build(qc, queries, rng.integers(-9, 9, n_queries, endpoint=True),
                              rng.integers(-3, 3, len(qc.dual_separator()), endpoint=True))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("time_limit", [1e-3, 0.5])
def test_time_limit_gives_fail_not_a_wrong_answer(backend, time_limit):
    """1 ms ends before the solver starts; 0.5 s ends in the solver's own limit or the watchdog's kill."""
    query = _marginal_query(12, 10, 1000, closed=True)
    start = time.perf_counter()
    result = get_oracle(backend).solve_query(query, Limits(time_limit=time_limit))
    elapsed = time.perf_counter() - start
    assert result.failed and result.solution is None
    assert elapsed < time_limit + 3.0, f"{backend} took {elapsed:.2f}s for a {time_limit}s limit"


@pytest.mark.parametrize("backend", BACKENDS)
def test_work_limit_gives_fail(backend):
    """A tiny deterministic budget (CP-SAT deterministic time, CBC nodes, RC2 conflicts) is not a proof."""
    query = _marginal_query(6, 5, 100, closed=False)
    budget, status = {"cpsat": (1e-3, "feasible"), "cbc": (1, "Stopped on node limit"),
                      "maxsat": (1, "work limit")}[backend]
    result = get_oracle(backend).solve_query(query, Limits(work_limit=budget))
    assert result.failed and result.solution is None
    assert result.backend_status in (status, "unknown")


def test_data_player_limits_never_claim_optimality():
    data = _marginal_data(8, 6, 400)
    reference = get_oracle("cpsat").solve_data(data)
    assert reference.proven
    for backend in BACKENDS:
        result = get_oracle(backend).solve_data(data, Limits(time_limit=1e-3))
        assert result.failed
        if result.solution is not None:  # an unproven incumbent is reported as such, and is exact
            assert result.objective == data.objective(result.solution) <= reference.objective


def test_watchdog_kills_sleeping_child_and_its_process_group(tmp_path):
    pid_file = tmp_path / "grandchild.pid"

    def sleeper():
        proc = subprocess.Popen(["sleep", "30"])
        pid_file.write_text(str(proc.pid))
        proc.wait()
        return "finished"

    start = time.perf_counter()
    out = run_with_deadline(sleeper, 0.3)
    elapsed = time.perf_counter() - start
    assert isinstance(out, TimedOut)
    assert 0.3 <= elapsed < 2.0
    grandchild = int(pid_file.read_text())
    deadline = time.perf_counter() + 2.0
    while _alive(grandchild) and time.perf_counter() < deadline:
        time.sleep(0.01)
    assert not _alive(grandchild), "the solver grandchild survived the kill"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie awaiting its reaper is dead
        return fh.read().split()[2] != "Z"


def test_watchdog_returns_results_and_reraises():
    assert run_with_deadline(lambda: {"x": np.arange(3)}, 5.0)["x"].tolist() == [0, 1, 2]
    assert run_with_deadline(lambda: 7, None) == 7

    def boom():
        raise ValueError("inside the child")

    with pytest.raises(ValueError, match="inside the child"):
        run_with_deadline(boom, 5.0)


# ----- pieces of the translation ------------------------------------------------------------
def _assignments(n):
    return itertools.product((0, 1), repeat=n)


def _lit(values, lit):
    return values[lit - 1] if lit > 0 else 1 - values[-lit - 1]


def test_xor_translation_is_exact():
    rng = np.random.default_rng(1)
    for _ in range(30):
        k = int(rng.integers(0, 6))
        lits = tuple(int(v) * (1 if rng.random() < 0.5 else -1) for v in rng.choice(np.arange(1, 7), k, replace=False))
        xor = Xor(lits, int(rng.integers(2)))
        counter = itertools.count(7)
        parts = split_xor(xor, lambda: next(counter))
        n_aux = next(counter) - 7
        assert all(len(p.lits) <= 3 for p in parts)
        for values in _assignments(6):
            want = sum(_lit(values, x) for x in lits) % 2 == xor.parity
            got = any(all(any(_lit(values + aux, x) for x in cl) for p in parts for cl in xor_clauses(p))
                      for aux in _assignments(n_aux))
            assert want == got


def test_big_m_linearisation_is_exact():
    rng = np.random.default_rng(2)
    for _ in range(40):
        terms = tuple((v, int(rng.integers(-3, 4))) for v in (1, 2, 3))
        lb, ub = sorted(rng.integers(-5, 6, 2).tolist())
        lin = Linear(terms, lb if rng.random() < 0.7 else None, ub if rng.random() < 0.7 else None,
                     int(rng.choice([4, -4])))
        rows = linearize(lin)
        for values in _assignments(4):
            act = sum(c * values[v - 1] for v, c in terms)
            holds = (lin.lb is None or act >= lin.lb) and (lin.ub is None or act <= lin.ub)
            want = holds or not _lit(values, lin.enforce)
            got = all((r.lb is None or sum(c * values[v - 1] for v, c in r.terms) >= r.lb)
                      and (r.ub is None or sum(c * values[v - 1] for v, c in r.terms) <= r.ub) for r in rows)
            assert want == got
    assert linearize(Clause((1, -2))) == [Linear(((1, 1), (2, -1)), 0, None)]
    assert linearize(Card((1, -2, 3), 0, 1)) == [Linear(((1, 1), (2, -1), (3, 1)), None, 0)]


def test_coinciding_points_are_merged():
    """A record equal to a separator point merges with it; zero totals disappear before encoding."""
    qc = Conjunctions(Domain(("a", "b"), (1, 2)))
    sep = qc.separator()
    record = np.array([[0, 1]])
    same = [i for i, p in enumerate(sep.points) if (p == qc.features(record)[0]).all()]
    assert len(same) == 1  # the one-hot record (1, 0, 1) is the point of bit 0 of attribute b
    eta = np.zeros(sep.m, dtype=np.int64)
    eta[same[0]], eta[(same[0] + 1) % sep.m] = 3, 2
    points, merged = weighted_points(qc, record, np.array([-3]), eta)
    assert merged.tolist() == [2]
    assert (points[0] == sep.points[(same[0] + 1) % sep.m]).all()


def test_cbc_log_parsing():
    stopped = "Result - Stopped on time limit\n\nObjective value:                149675.00000000\n" \
              "Upper bound:                    149832.427\nGap:                            -0.00\n" \
              "Enumerated nodes:               1492\n"
    assert _parse_log(stopped) == {"result": "Stopped on time limit", "objective": 149675.0, "bound": 149832.427,
                                   "nodes": 1492}
    optimal = "Result - Optimal solution found\n\nObjective value:                -10492.00000000\n" \
              "Enumerated nodes:               6\n"
    assert _parse_log(optimal) == {"result": "Optimal solution found", "objective": -10492.0, "nodes": 6}


@pytest.mark.parametrize("workers, flag", [(1, None), (2, "-threads 2")])
def test_cbc_runs_sequentially_unless_asked_for_workers(monkeypatch, workers, flag):
    """CBC's "-threads 1" is its threaded search with one worker, whose thread join stalled solves
    for 10-20 s on this machine: one worker must mean no threads option at all."""
    import pulp

    seen = []
    original = pulp.PULP_CBC_CMD.solve_CBC

    def spy(self, lp, use_mps=True):
        seen.append(" ".join(self.getOptions()))
        return original(self, lp, use_mps)

    monkeypatch.setattr(pulp.PULP_CBC_CMD, "solve_CBC", spy)
    rng = np.random.default_rng(3)
    qc = Conjunctions.marginals(Domain(("a", "b"), (2, 3)), 2)
    result = get_oracle("cbc").solve_query(_query_instance(rng, qc), Limits(workers=workers))
    assert result.proven and seen
    assert all(("threads" in s) == (flag is not None) for s in seen), seen
