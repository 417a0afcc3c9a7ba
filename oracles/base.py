"""The common contract of every oracle backend.

Two problems (docs/privacy.md §1.5 and §4.1):

* **query player** (private side): ``min_q F(q)`` with
  ``F(q) = sum_r w_r q(x_r) + sum_i eta_i sig_i(q)`` over a query class, all
  coefficients integers.  The answer is either a *certified* optimum or FAIL.
* **data player** (non-private side): ``max_x sum_t w_t q_t(x) + sum_j rho_j x_j``
  over valid records, where ``x_j`` are the dual-separator coordinates.

Backends implement only the base-class problems (``_minimize`` /
``_maximize``); this module handles complement-closed classes (both senses,
each certified), recomputes every objective exactly (R2) and accepts an
answer only when ``F(q) <= ceil(LB)`` for the backend's proven bound (R3).
"""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import numpy as np

from synthdp.queries.base import QueryClass
from synthdp.queries.complement import ComplementClosed, Not, base_class, split

OPTIMAL = "optimal"
FAIL = "fail"


@dataclass(frozen=True)
class Limits:
    """Limits of one oracle call.

    ``time_limit`` is wall-clock seconds enforced by the caller (a hard kill
    where the solver does not honour it); ``work_limit`` is a deterministic
    budget (CP-SAT deterministic time, native search nodes) as PRSMA needs
    (docs/privacy.md §1.5, A-stateless).  ``None`` means no limit (Mode E).
    """

    time_limit: float | None = None
    work_limit: float | None = None
    seed: int = 0
    workers: int = 1


NO_LIMITS = Limits()


@dataclass(frozen=True)
class QueryInstance:
    """``min_q sum_r weights[r] q(codes[r]) + sum_i separator_weights[i] sig_i(q)``."""

    query_class: QueryClass
    codes: np.ndarray
    weights: np.ndarray
    separator_weights: np.ndarray

    @classmethod
    def build(cls, query_class: QueryClass, codes, weights, separator_weights=None) -> "QueryInstance":
        codes = np.asarray(codes, dtype=np.int64).reshape(-1, len(query_class.domain))
        weights = np.asarray(weights, dtype=np.int64)
        m = query_class.separator().m
        sep = np.zeros(m, dtype=np.int64) if separator_weights is None else np.asarray(separator_weights, dtype=np.int64)
        if sep.shape != (m,):
            raise ValueError(f"separator_weights must have length m={m}, got {sep.shape}")
        return cls(query_class, codes, weights, sep)

    def objective(self, query) -> int:
        """Exact integer objective of ``query`` (R2)."""
        return self.query_class.objective(query, self.codes, self.weights, self.separator_weights)


@dataclass(frozen=True)
class DataInstance:
    """``max_x sum_t weights[t] q_t(x) + sum_j rho[j] [x_{a_j} == v_j]`` over valid records."""

    query_class: QueryClass
    queries: tuple
    weights: np.ndarray
    rho: np.ndarray

    @classmethod
    def build(cls, query_class: QueryClass, queries: Sequence[Any], weights, rho=None) -> "DataInstance":
        d = len(query_class.dual_separator())
        rho = np.zeros(d, dtype=np.int64) if rho is None else np.asarray(rho, dtype=np.int64)
        if rho.shape != (d,):
            raise ValueError(f"rho must have length {d} (dual separator size), got {rho.shape}")
        return cls(query_class, tuple(queries), np.asarray(weights, dtype=np.int64), rho)

    def objective(self, record) -> int:
        """Exact integer objective of one record (a code vector)."""
        codes = np.asarray(record, dtype=np.int64).reshape(1, -1)
        vals = self.query_class.evaluate(list(self.queries), self.query_class.features(codes))[:, 0] if self.queries else np.zeros(0)
        dual = self.query_class.dual_separator()
        coords = np.array([codes[0, a] == v for a, v in dual], dtype=np.int64)
        return int(np.dot(vals.astype(np.int64), self.weights)) + int(np.dot(coords, self.rho))

    def base_form(self) -> tuple[list, np.ndarray, int]:
        """Base queries and weights with complements folded in: ``w (1 - q) = w - w q``."""
        base, neg = split(self.queries)
        signs = np.where(neg.astype(bool), -1, 1)
        return base, self.weights * signs, int(self.weights[neg.astype(bool)].sum())


@dataclass(frozen=True)
class OracleResult:
    """What an oracle call returns: a certified solution or FAIL, and how it got there.

    ``bound`` is the proven dual bound (a lower bound for the query player,
    an upper bound for the data player) in the instance's integer units.
    """

    status: str
    solution: Any
    objective: int | None
    bound: float | None
    backend: str
    backend_status: str
    wall_time: float
    nodes: int | None = None
    message: str = ""

    @property
    def proven(self) -> bool:
        return self.status == OPTIMAL

    @property
    def failed(self) -> bool:
        return self.status == FAIL


@dataclass
class Raw:
    """A backend's raw answer before certification."""

    solution: Any
    bound: float | None
    backend_status: str
    proven: bool
    nodes: int | None = None
    message: str = ""
    extra: dict = field(default_factory=dict)


def _fail(backend: str, status: str, start: float, message: str, nodes=None) -> OracleResult:
    return OracleResult(FAIL, None, None, None, backend, status, time.perf_counter() - start, nodes, message)


class Oracle(ABC):
    """A backend for both players; subclasses implement the base-class problems."""

    name: str = "oracle"
    #: Whether its "optimal" comes with a proof (a valid dual bound).
    certifiable: bool = True
    #: Exclusive bound on ``sum |coefficients|`` the backend handles exactly (docs/privacy.md §2.7 R1);
    #: the conservative default is a floating-point MIP solver's.
    integer_limit: int = 2**50
    #: Deterministic work budget per call used by PRSMA when the caller gives none
    #: (CP-SAT deterministic seconds by default; backends override in their own unit).
    default_work_limit: float = 10.0
    #: Work budget per data-player call in the game (None: run to the proof).  The data player
    #: need not be exact for privacy; a budget bounds the rare instances whose proof explodes.
    default_data_work_limit: float | None = None

    @abstractmethod
    def supports(self, query_class: QueryClass) -> bool:
        """Whether this backend can encode the (base) class."""

    @abstractmethod
    def _minimize(self, query_class: QueryClass, codes: np.ndarray, weights: np.ndarray,
                  separator_weights: np.ndarray, limits: Limits) -> Raw:
        """``min_q sum_r w_r q(x_r) + sum_i eta_i sig_i(q)`` over a base (not complement-closed) class."""

    @abstractmethod
    def _maximize(self, query_class: QueryClass, queries: list, weights: np.ndarray,
                  rho: np.ndarray, limits: Limits) -> Raw:
        """``max_x sum_t w_t q_t(x) + sum_j rho_j x_j`` over valid records; solution is a code vector."""

    def _unsupported(self, base: QueryClass, start: float) -> OracleResult:
        return _fail(self.name, "unsupported", start, f"backend {self.name!r} cannot encode {base.name}")

    # ----- query player ----------------------------------------------------
    def solve_query(self, instance: QueryInstance, limits: Limits = NO_LIMITS) -> OracleResult:
        """Certified minimiser of the instance, or FAIL (docs/privacy.md §2.7 R2-R3)."""
        start = time.perf_counter()
        qc = instance.query_class
        base = base_class(qc)
        if not self.supports(base):
            return self._unsupported(base, start)
        try:
            if base is not qc:  # a complement-closed wrapper: its queries may be Not(q) of base queries
                raw = self._minimize_closed(qc, instance, limits)
            else:
                raw = self._minimize(qc, instance.codes, instance.weights, instance.separator_weights, limits)
        except _Deadline as exc:
            return _fail(self.name, "time limit", start, str(exc))
        return certify_query(instance, raw, self.name, start)

    def _minimize_closed(self, qc: ComplementClosed, inst: QueryInstance, limits: Limits) -> Raw:
        """Optimise over ``q`` and ``1 - q`` together; each sense must be proven.

        With base objective ``G(q) = sum w q(x) + sum_{i<m} eta_i sig_i(q)`` and
        the anchor coordinate ``eta_a`` (value ``c`` on base queries):
        ``F(q) = G(q) + eta_a c`` and ``F(1 - q) = C - G(q)`` with
        ``C = sum w + sum_{i<m} eta_i + eta_a (1 - c)``.  So the complement
        sense is ``C + min(-G)``.
        """
        sep, eta_a = inst.separator_weights[:-1], int(inst.separator_weights[-1])
        anchor = qc.base.anchor()
        c = anchor[1] if anchor is not None else 0
        deadline = None if limits.time_limit is None else time.perf_counter() + limits.time_limit
        pos = self._minimize(qc.base, inst.codes, inst.weights, sep, limits)
        if not pos.proven:
            return pos
        if deadline is not None:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise _Deadline("time limit reached between the two senses of a complement-closed class")
            limits = replace(limits, time_limit=left)
        neg = self._minimize(qc.base, inst.codes, -inst.weights, -sep, limits)
        if not neg.proven:
            return neg
        for raw in (pos, neg):
            if not qc.base.contains(raw.solution):
                return Raw(None, raw.bound, raw.backend_status, False, raw.nodes,
                           f"solver returned a query outside the class: {raw.solution!r}")
        big_c = int(inst.weights.sum()) + int(sep.sum()) + eta_a * (1 - c)
        lb_pos = None if pos.bound is None else pos.bound + eta_a * c
        lb_neg = None if neg.bound is None else big_c + neg.bound
        f_pos = inst.objective(pos.solution)
        f_neg = inst.objective(Not(neg.solution))
        best = pos.solution if f_pos <= f_neg else Not(neg.solution)
        bound = None if lb_pos is None or lb_neg is None else min(lb_pos, lb_neg)
        nodes = (pos.nodes or 0) + (neg.nodes or 0)
        return Raw(best, bound, f"{pos.backend_status}/{neg.backend_status}", True, nodes)

    # ----- data player -----------------------------------------------------
    def solve_data(self, instance: DataInstance, limits: Limits = NO_LIMITS) -> OracleResult:
        """Maximising record (a code vector) with its report; proven or not."""
        start = time.perf_counter()
        base = base_class(instance.query_class)
        if not self.supports(base):
            return self._unsupported(base, start)
        queries, weights, const = instance.base_form()
        try:
            raw = self._maximize(base, queries, weights, instance.rho, limits)
        except _Deadline as exc:
            return _fail(self.name, "time limit", start, str(exc))
        if raw.solution is None:
            return _fail(self.name, raw.backend_status, start, raw.message, raw.nodes)
        record = np.asarray(raw.solution, dtype=np.int64)
        value = instance.objective(record)
        bound = None if raw.bound is None else raw.bound + const
        proven = raw.proven and bound is not None and value >= math.floor(bound)
        return OracleResult(OPTIMAL if proven else FAIL, record, value, bound, self.name, raw.backend_status,
                            time.perf_counter() - start, raw.nodes, raw.message)

    def solve_data_many(self, query_class: QueryClass, queries: Sequence[Any], weights, rho_matrix,
                        limits: Limits = NO_LIMITS) -> list[OracleResult]:
        """:meth:`solve_data` for each row of ``rho_matrix`` (the ``N`` samples of a round share
        queries and weights); backends may override it to prepare the queries once."""
        return [self.solve_data(DataInstance.build(query_class, queries, weights, rho), limits)
                for rho in np.asarray(rho_matrix, dtype=np.int64)]


class _Deadline(Exception):
    """Raised inside a backend when its wall-clock limit is reached."""


Deadline = _Deadline


def certify_query(instance: QueryInstance, raw: Raw, backend: str, start: float) -> OracleResult:
    """Accept a query only with an exact, verified certificate (docs/privacy.md §2.7).

    R2: the query must belong to the class, and its objective is recomputed
    exactly in integer arithmetic.  R3: it counts as optimal only if
    ``F(q) <= ceil(LB)`` for the backend's proven lower bound ``LB``.  A bound
    above the recomputed objective is impossible and also FAILs.
    """
    wall = time.perf_counter() - start
    if raw.solution is None or not raw.proven:
        return OracleResult(FAIL, None, None, raw.bound, backend, raw.backend_status, wall, raw.nodes,
                            raw.message or "no proven optimum")
    if not instance.query_class.contains(raw.solution):
        return OracleResult(FAIL, None, None, raw.bound, backend, raw.backend_status, wall, raw.nodes,
                            f"solver returned a query outside the class: {raw.solution!r}")
    value = instance.objective(raw.solution)
    if raw.bound is None or not math.isfinite(raw.bound):
        return OracleResult(FAIL, None, value, raw.bound, backend, raw.backend_status, wall, raw.nodes,
                            "no finite dual bound")
    ceil_lb = math.ceil(raw.bound - 1e-9) if isinstance(raw.bound, float) else int(raw.bound)
    if value > ceil_lb:
        return OracleResult(FAIL, None, value, raw.bound, backend, raw.backend_status, wall, raw.nodes,
                            f"objective {value} exceeds ceil(bound) {ceil_lb}: not proven optimal")
    if raw.bound > value + 1e-6:
        return OracleResult(FAIL, None, value, raw.bound, backend, raw.backend_status, wall, raw.nodes,
                            f"invalid certificate: bound {raw.bound} above a feasible objective {value}")
    return OracleResult(OPTIMAL, raw.solution, value, raw.bound, backend, raw.backend_status, wall, raw.nodes,
                        raw.message)
