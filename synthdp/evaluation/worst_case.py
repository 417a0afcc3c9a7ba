"""Certified worst-case error of a synthetic table over a whole query class.

The data owner's check (non-private: it reads the real data freely and
releases nothing): the exact maximum over every query ``q`` of a class of

    ``|q(real) - q(synthetic)|``,  with ``q(D) = (count of rows of D that q accepts) / |D|``,

and a query that attains it, found by the certified oracles.  With real
counts ``c_x`` (``n`` rows) and synthetic counts ``s_x`` (``m`` rows),

    ``q(real) - q(synthetic) = (1 / (n m)) sum_x q(x) w_x``,  ``w_x = m c_x - n s_x``,

so the maximum is ``max(-min_q sum_x w_x q(x), -min_q sum_x (-w_x) q(x)) / (n m)``:
two certified minimisations with integer weights, one per sense, divided
by ``n m`` only at the end (exact fractions).  A class closed under
complement needs one sense: ``sum_x w_x = 0``, so ``1 - q`` has the
opposite error.

Each sense is solved by the best backend for the class (``backend="auto"``):
the exact search where it applies (marginal tables for width-bounded
conjunctions and workloads, the row-class branch and bound of
:mod:`synthdp.oracles.exact.suffix` for other conjunctions and monotone
conjunctions, the Walsh-Hadamard transform of
:mod:`synthdp.oracles.exact.transform` for parities, and disjunctions over
binary attributes through their De Morgan conjunctions), enumeration for
classes small enough, CP-SAT for the rest (halfspaces, disjunctions over
wider attributes).  A time limit stops the exact searches cleanly (they
check the clock at every node), CP-SAT at its own limit with a hard kill
behind it (:mod:`synthdp.oracles.watchdog`), and the transform and
enumeration by the hard kill alone.  A result counts as the maximum only when both senses
pass :func:`synthdp.oracles.base.certify_query` (the query belongs to the
class, its objective is recomputed exactly, and the proven bound meets it);
otherwise the report gives the best query found (a lower bound) and the
best proven upper bound, never the incumbent as the maximum.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.core.encoding import Encoder
from synthdp.core.errors import InputError
from synthdp.core.schema import resolve_schema
from synthdp.evaluation.similarity import check_same_columns
from synthdp.oracles import get_oracle
from synthdp.oracles.base import Limits, QueryInstance, Raw, certify_query
from synthdp.oracles.brute import BruteForceOracle
from synthdp.oracles.exact import query as exact_query, suffix as exact_suffix, transform as exact_transform
from synthdp.oracles.exact.common import Budget, SearchOutcome, exact_in_float
from synthdp.oracles.watchdog import TimedOut, run_with_deadline
from synthdp.queries.base import ENUMERATION_LIMIT, QueryClass
from synthdp.queries.complement import base_class
from synthdp.queries.conjunctions import Conjunction, Conjunctions
from synthdp.queries.disjunctions import Disjunction, Disjunctions
from synthdp.queries.halfspaces import Halfspace, Halfspaces
from synthdp.queries.monotone import MonotoneConjunctions
from synthdp.queries.spec import parse_query_class

log = logging.getLogger(__name__)

#: Seconds the whole evaluation may take by default.
DEFAULT_TIME_LIMIT = 60.0
#: ``backend="auto"`` enumerates a class when ``queries x rows`` is at most this (about a second).
BRUTE_WORK = 5e7
#: The backends :func:`worst_case_error` accepts.
BACKENDS = ("auto", "exact", "cpsat", "brute")
#: Share of a sense's time that a halfspace class spends on its conjunctions first (:func:`_halfspace_seeds`).
_SEED_SHARE = 0.2
#: A floating dual bound is trusted to this tolerance before rounding up to the integer bound it proves.
_BOUND_TOLERANCE = 1e-6


@dataclass(frozen=True)
class WorstCase:
    """The largest ``|q(real) - q(synthetic)|`` over a class, or bounds on it.

    ``error`` is the certified maximum (``None`` when it could not be
    certified); ``lower <= max <= upper`` always holds, with ``lower`` the
    error of ``query`` (the best query found) and ``lower == upper == error``
    when certified.  ``exact_lower`` / ``exact_upper`` are the same as
    fractions with denominator ``n_real * n_synthetic``.  ``real_answer`` and
    ``synthetic_answer`` are ``q(real)`` and ``q(synthetic)`` of ``query``.
    """

    query_class: str
    class_size: int
    certified: bool
    error: float | None
    lower: float
    upper: float
    exact_lower: Fraction
    exact_upper: Fraction
    query: Any | None
    text: str | None
    real_answer: float | None
    synthetic_answer: float | None
    n_real: int
    n_synthetic: int
    backend: str
    seconds: float
    message: str = ""

    def summary(self) -> str:
        """A few lines for a person: the maximum (or the bounds) and the query that attains it."""
        size = f"{self.class_size:,}" if self.class_size < 10**12 else f"{float(self.class_size):.3g}"
        head = f"max |q(real) - q(synthetic)| over {self.query_class} ({size} queries)"
        if self.certified:
            lines = [f"{head}: {self.error:.4f} (certified by {self.backend} in {self.seconds:.2f} s)"]
        else:
            lines = [f"{head}: NOT certified within the limits ({self.seconds:.2f} s, {self.backend}); "
                     f"{self.lower:.4f} <= max <= {self.upper:.4f}"]
            if self.message:
                lines.append(f"  why: {self.message}")
        if self.query is not None:
            label = "worst query" if self.certified else "best query found"
            lines.append(f"{label}: {self.text}")
            lines.append(f"  q(real) = {self.real_answer:.4f}, q(synthetic) = {self.synthetic_answer:.4f}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-ready fields (the query as text; the exact bounds as ``"p/q"`` strings)."""
        return {
            "query_class": self.query_class, "class_size": str(self.class_size), "certified": self.certified,
            "error": self.error, "lower": self.lower, "upper": self.upper, "exact_lower": str(self.exact_lower),
            "exact_upper": str(self.exact_upper), "query": self.text, "real_answer": self.real_answer,
            "synthetic_answer": self.synthetic_answer, "n_real": self.n_real, "n_synthetic": self.n_synthetic,
            "backend": self.backend, "seconds": self.seconds, "message": self.message,
        }


@dataclass(frozen=True)
class _Sense:
    """One minimisation ``min_q sum_x sign w_x q(x)``: the best query found, its value, a proven bound."""

    query: Any | None
    value: int | None
    bound: int
    certified: bool
    message: str


class _Clock(Budget):
    """The exact searches' budget, but the deadline stops the search cleanly (incumbent and open bound)
    instead of raising, so an uncertified result still has both bounds."""

    def spend(self, nodes: int = 1) -> bool:
        self.nodes += nodes
        if self.deadline is not None and time.perf_counter() > self.deadline:
            return False
        return self.max_nodes is None or self.nodes <= self.max_nodes


def exact_supports(query_class: QueryClass) -> bool:
    """Whether the evaluator's exact search handles the class: conjunctions and monotone conjunctions
    (searches of the exact backend), parities of at most 24 binary features (a Walsh-Hadamard transform), and
    disjunctions over all-binary attributes (the conjunctions of the flipped literals, by De Morgan)."""
    return (exact_query.supported(query_class) or exact_transform.supported(query_class)
            or _binary_disjunctions(query_class))


def _binary_disjunctions(query_class: QueryClass) -> bool:
    return (query_class.disjoins == "one-hot"
            and all(size == 2 for size in query_class.domain.sizes))


def choose_backend(query_class: QueryClass, n_rows: int) -> str:
    """``exact`` where :func:`exact_supports`, ``brute`` for small classes, else ``cpsat`` (public inputs only)."""
    if exact_supports(query_class):
        return "exact"
    size = query_class.size()
    return "brute" if size <= ENUMERATION_LIMIT and size * max(n_rows, 1) <= BRUTE_WORK else "cpsat"


def _check_backend(backend: str, query_class: QueryClass) -> str:
    """A backend the caller forced, if it can handle the class."""
    if backend == "exact" and not exact_supports(query_class):
        raise InputError(f"the exact backend does not handle {query_class.name}; use backend 'auto' or 'cpsat'")
    if backend == "brute" and query_class.size() > ENUMERATION_LIMIT:
        raise InputError(f"{query_class.name} has {query_class.size()} queries, more than brute force enumerates "
                         f"({ENUMERATION_LIMIT}); use backend 'auto'")
    return backend


def _exact_raw(query_class: QueryClass, codes: np.ndarray, weights: np.ndarray, limits: Limits) -> tuple[Raw, str]:
    """The exact search: marginal tables where the exact backend would use them, the row-class search for
    other conjunctions, the Walsh-Hadamard transform for parities (under the hard kill: it checks no clock)."""
    if _binary_disjunctions(query_class):
        return _disjunctions_raw(query_class, codes, weights, limits)
    if exact_transform.supported(query_class):
        outcome = run_with_deadline(partial(exact_transform.minimize, query_class, codes, weights), limits.time_limit)
        if isinstance(outcome, TimedOut):
            return Raw(None, None, "time limit", False, message=f"transform killed after {outcome.seconds:.3g} s"), \
                "exact (walsh-hadamard)"
        return _outcome_raw(outcome), f"exact ({outcome.method})"
    budget = _Clock(limits)
    sets = exact_query.attribute_sets(query_class)
    if not exact_suffix.supported(query_class) or exact_query.use_tables(query_class, sets, len(codes)):
        eta = np.zeros(query_class.separator().m, dtype=np.int64)
        outcome = exact_query.minimize(query_class, codes, weights, eta, budget, "tables")
    else:
        outcome = exact_suffix.minimize(query_class, codes, weights, budget)
    return _outcome_raw(outcome), f"exact ({outcome.method})"


def _disjunctions_raw(query_class: Disjunctions, codes: np.ndarray, weights: np.ndarray,
                      limits: Limits) -> tuple[Raw, str]:
    """Disjunctions over binary attributes through their De Morgan conjunctions.

    On a two-valued attribute ``[x_a != v] = [x_a == 1 - v]``, so the
    disjunction of the literals ``(a, v_a)`` is ``1 - c(x)`` for the
    conjunction ``c`` of the literals ``(a, 1 - v_a)``, a bijection of the
    classes with the same widths.  Hence ``sum_x w_x q(x) = W - sum_x w_x c(x)``
    with ``W = sum_x w_x``: the minimum over disjunctions is ``W`` plus the
    minimum over conjunctions with weights ``-w``, and so is its bound.  The
    query is mapped back and certified against the disjunction objective.
    """
    raw, name = _exact_raw(query_class.base, codes, -weights, limits)
    total = int(weights.sum())
    solution = None if raw.solution is None else Disjunction(
        Conjunction(tuple((a, 1 - v) for a, v in raw.solution.literals)))
    bound = None if raw.bound is None else total + raw.bound
    return Raw(solution, bound, raw.backend_status, raw.proven, raw.nodes, raw.message), f"{name}, by De Morgan"


def _outcome_raw(outcome: SearchOutcome) -> Raw:
    bound = outcome.bound
    if bound is not None and not math.isfinite(bound):
        bound = None
    message = "" if outcome.proven else f"the exact search stopped after {outcome.nodes} nodes"
    return Raw(outcome.solution, bound, outcome.method, outcome.proven, outcome.nodes, message)


def _solve(backend: str, query_class: QueryClass, codes: np.ndarray, weights: np.ndarray,
           limits: Limits) -> tuple[Raw, str]:
    """A backend's raw answer (incumbent and bound even when unproven) and the backend's name."""
    zeros = np.zeros(query_class.separator().m, dtype=np.int64)
    if backend == "exact":
        if exact_in_float(weights):
            return _exact_raw(query_class, codes, weights, limits)
        log.info("weights too large for the exact search's float64 arithmetic; using CP-SAT")
        backend = "cpsat"
    if backend == "brute":
        oracle = BruteForceOracle()
        raw = run_with_deadline(partial(oracle._minimize, query_class, codes, weights, zeros, Limits()),
                                limits.time_limit)
        if isinstance(raw, TimedOut):
            return Raw(None, None, "time limit", False, message=f"enumeration killed after {raw.seconds:.3g} s"), "brute"
        return raw, "brute"
    oracle = get_oracle("cpsat")
    if not oracle.supports(query_class):
        raise InputError(f"no certified backend encodes {query_class.name}")
    # _minimize (not solve_query) so that an unproven run keeps its incumbent and bound.
    return oracle._minimize(query_class, codes, weights, zeros, limits), "cpsat"


def _sense(backend: str, query_class: QueryClass, codes: np.ndarray, weights: np.ndarray,
           limits: Limits) -> tuple[_Sense, str]:
    """Certified ``min_q sum_x weights_x q(x)``, or the best query found and the best proven bound."""
    instance = QueryInstance.build(query_class, codes, weights)
    start = time.perf_counter()
    seeds = []
    if query_class.linear_threshold and backend == "cpsat" and exact_in_float(weights):
        seeds = _halfspace_seeds(query_class, codes, weights, limits)
        if limits.time_limit is not None:
            limits = replace(limits, time_limit=limits.time_limit - (time.perf_counter() - start))
    if limits.time_limit is not None and limits.time_limit <= 0:
        raw, name = Raw(None, None, "time limit", False, message="no time left"), backend
    else:
        raw, name = _solve(backend, query_class, codes, weights, limits)
    result = certify_query(instance, raw, name, start)
    trivial = int(np.minimum(weights, 0).sum())  # no query covers more than the negative rows
    if result.proven:
        return _Sense(result.solution, int(result.objective), int(result.objective), True, ""), name
    found = [q for q in (raw.solution, *seeds) if q is not None and query_class.contains(q)]
    value, query = min(((instance.objective(q), q) for q in found), key=lambda pair: pair[0], default=(None, None))
    bound = trivial
    if raw.bound is not None and math.isfinite(raw.bound):
        proven = math.ceil(raw.bound - _BOUND_TOLERANCE)
        if value is None or proven <= value:  # a bound above a feasible value is no certificate
            bound = max(bound, proven)
    return _Sense(query, value, bound, False, result.message or raw.message), name


def _halfspace_seeds(query_class: Halfspaces, codes: np.ndarray, weights: np.ndarray, limits: Limits) -> list:
    """The best conjunctions that are also halfspaces of the class: incumbents even if CP-SAT returns none.

    Halfspaces contain the monotone conjunctions of their features
    (``[sum_{j in S} x_j >= |S|]``) and, when every attribute is binary, every
    conjunction (weight +1 on a literal ``x_a = 1``, -1 on ``x_a = 0``,
    threshold the number of +1 literals), and the complements of all these.
    The minimiser of ``weights`` over those conjunctions and the complement of
    the minimiser of ``-weights`` share :data:`_SEED_SHARE` of the sense's
    time; they are only candidates (a lower bound), checked like any solver answer.
    """
    binary = all(size == 2 for size in query_class.domain.sizes)
    inner = Conjunctions(query_class.domain) if binary else MonotoneConjunctions(query_class.domain)
    share = None if limits.time_limit is None else _SEED_SHARE * limits.time_limit / 2
    seeds = []
    for sign in (1, -1):
        raw, _ = _exact_raw(inner, codes, sign * weights, Limits(time_limit=share))
        if raw.solution is None:
            continue
        w = [0] * query_class.n_features
        if binary:
            for a, v in raw.solution.literals:
                w[a] = 1 if v == 1 else -1
            seed = Halfspace(tuple(w), sum(v == 1 for _, v in raw.solution.literals))
        else:
            for j in raw.solution.features:
                w[j] = 1
            seed = Halfspace(tuple(w), len(raw.solution.features))
        seeds.append(seed if sign == 1 else query_class.complement(seed))
    return seeds


def _aggregate(real, synthetic, schema) -> tuple[AggregatedData, AggregatedData]:
    """Both tables as aggregated codes over one domain; clear errors on mismatched inputs."""
    if isinstance(real, AggregatedData) and isinstance(synthetic, AggregatedData):
        if real.domain != synthetic.domain:
            raise InputError(f"the real and synthetic data have different domains: {real.domain.names} with sizes "
                             f"{real.domain.sizes} vs {synthetic.domain.names} with sizes {synthetic.domain.sizes}")
        out = real, synthetic
    elif isinstance(real, pd.DataFrame) and isinstance(synthetic, pd.DataFrame):
        check_same_columns(real, synthetic)

        encoder = Encoder(resolve_schema(real, schema, []))
        out = encoder.to_aggregated(real), encoder.to_aggregated(synthetic)
    else:
        raise InputError(f"real and synthetic must both be DataFrames or both AggregatedData, got "
                         f"{type(real).__name__} and {type(synthetic).__name__}")
    for name, data in zip(("real", "synthetic"), out):
        if data.n == 0:
            raise InputError(f"the {name} table has no rows")
    return out


def _query_class(spec: str | QueryClass, domain: Domain) -> QueryClass:
    qc = parse_query_class(spec, domain, closed=False)
    if qc.domain != domain:
        raise InputError(f"the query class {qc.name} is over another domain than the data ({qc.domain.names})")
    return base_class(qc)


def worst_case_error(real, synthetic, query_class: str | QueryClass, *, schema=None,
                     time_limit: float | None = DEFAULT_TIME_LIMIT, backend: str = "auto",
                     work_limit: float | None = None) -> WorstCase:
    """The certified maximum of ``|q(real) - q(synthetic)|`` over ``query_class``, or bounds on it.

    ``real`` and ``synthetic``: two DataFrames with the same columns (encoded
    with ``schema``, or a schema built from ``real``), or two
    :class:`~synthdp.core.data.AggregatedData` over one domain.
    ``query_class``: a spec such as ``"conjunctions"``, ``"parities:3"``,
    ``"halfspaces:1"``, ``"marginals:3"`` (see :mod:`synthdp.queries.spec`), or
    a class; complements add nothing (``1 - q`` has the opposite error).
    ``time_limit``: seconds for the whole evaluation (``None``: no limit).
    ``backend``: one of :data:`BACKENDS`.  ``work_limit``: a deterministic
    budget per sense in the backend's unit (nodes of the exact searches,
    CP-SAT's deterministic seconds; the transform and enumeration have none).
    """
    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r}; choose one of {list(BACKENDS)}")
    if time_limit is not None and not time_limit > 0:
        raise InputError(f"time_limit must be positive seconds or None, got {time_limit!r}")
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    real_data, syn_data = _aggregate(real, synthetic, schema)
    qc = _query_class(query_class, real_data.domain)
    n, m = real_data.n, syn_data.n
    codes, weights = real_data.combine(syn_data, m, -n)  # w_x = m c_x - n s_x
    chosen = choose_backend(qc, len(codes)) if backend == "auto" else _check_backend(backend, qc)
    signs = (1,) if qc.complement_closed else (1, -1)
    senses, names = [], []
    for i, sign in enumerate(signs):
        left = None if deadline is None else (deadline - time.perf_counter()) / (len(signs) - i)
        sense, name = _sense(chosen, qc, codes, sign * weights, Limits(time_limit=left, work_limit=work_limit))
        senses.append(sense)
        names.append(name)
    return _report(qc, real_data, syn_data, codes, weights, senses, names, time.perf_counter() - start)


def _report(qc: QueryClass, real: AggregatedData, syn: AggregatedData, codes: np.ndarray, weights: np.ndarray,
            senses: list[_Sense], names: list[str], seconds: float) -> WorstCase:
    """Combine the senses: the maximum is ``max_s -min_s``; bounds from incumbents and proven bounds."""
    n, m = real.n, syn.n
    scale = n * m
    upper = max(-s.bound for s in senses)
    found = [s.query for s in senses if s.query is not None]
    query, lower = None, 0
    if found:
        errors = [abs(int(v)) for v in qc.answer(found, codes, weights)]
        best = int(np.argmax(errors))
        query, lower = found[best], errors[best]
    certified = all(s.certified for s in senses)
    if certified and lower != upper:
        raise RuntimeError(f"certified senses disagree: best query {lower} vs bound {upper} (units of 1/{scale})")
    if lower > upper:
        raise RuntimeError(f"invalid certificate: a query's error {lower} exceeds the proven bound {upper}")
    real_answer = syn_answer = text = None
    if query is not None:
        text = qc.describe(query)
        real_answer = int(qc.answers([query], real)[0]) / n
        syn_answer = int(qc.answers([query], syn)[0]) / m
    exact_lower, exact_upper = Fraction(lower, scale), Fraction(upper, scale)
    message = "; ".join(dict.fromkeys(s.message for s in senses if not s.certified and s.message))
    backend = " / ".join(dict.fromkeys(names))
    log.info("worst case over %s: [%s, %s] certified=%s in %.2fs (%s)", qc.name, float(exact_lower),
             float(exact_upper), certified, seconds, backend)
    return WorstCase(qc.name, qc.size(), certified, float(exact_lower) if certified else None, float(exact_lower),
                     float(exact_upper), exact_lower, exact_upper, query, text, real_answer, syn_answer, n, m,
                     backend, seconds, message)
