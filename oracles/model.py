"""A backend-neutral integer model: where every encoding is written once.

Each query-class family has one encoder (:mod:`synthdp.oracles.encodings`) that
builds a :class:`Model`; every backend (CP-SAT, CBC, MaxSAT) translates the
same model.  The vocabulary is small on purpose:

* variables: Booleans, numbered from 1 so that a literal is a signed
  variable number, ``+v`` or ``-v`` (DIMACS style); integers (halfspace
  weights) are written by their binary digits;
* constraints: :class:`Clause` (OR of literals), :class:`Card` (a count of
  true literals between two bounds), :class:`Linear` (integer
  coefficients, optionally enforced by a literal) and :class:`Xor`;
* an integer objective ``sum coef * var + constant``, minimised or maximised.

The constraint *kinds* a family uses decide which backends support it
(pure clause / cardinality / XOR models go to MaxSAT; general linear
constraints need CP-SAT or a MIP solver).

A variable is *relaxable* when, for every integer assignment of the other
variables, the problem over the relaxable ones has an integral optimal
solution even with their integrality dropped (each is squeezed between
integer bounds, or pushed by the objective onto one); a MIP backend may then
declare it continuous.  Decoders read only non-relaxable variables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Union

Lit = int

MINIMIZE = "min"
MAXIMIZE = "max"


@dataclass(frozen=True)
class Var:
    """A Boolean decision variable (``name`` is for debugging only)."""

    name: str
    relaxable: bool = False


@dataclass(frozen=True)
class Clause:
    """At least one literal is true."""

    lits: tuple[Lit, ...]


@dataclass(frozen=True)
class Card:
    """``lb <= #true literals <= ub``."""

    lits: tuple[Lit, ...]
    lb: int
    ub: int


@dataclass(frozen=True)
class Linear:
    """``lb <= sum coef * var <= ub`` (``None`` = unbounded), required only when ``enforce`` is true."""

    terms: tuple[tuple[int, int], ...]
    lb: int | None
    ub: int | None
    enforce: Lit | None = None


@dataclass(frozen=True)
class Xor:
    """The XOR of the literals equals ``parity`` (0 or 1)."""

    lits: tuple[Lit, ...]
    parity: int


Constraint = Union[Clause, Card, Linear, Xor]

#: Name of each constraint type, as used by backend capability sets.
KIND = {Clause: "clause", Card: "card", Linear: "linear", Xor: "xor"}


class Model:
    """Variables, constraints and an integer objective to minimise or maximise."""

    def __init__(self, sense: str):
        if sense not in (MINIMIZE, MAXIMIZE):
            raise ValueError(f"sense must be {MINIMIZE!r} or {MAXIMIZE!r}, got {sense!r}")
        self.sense = sense
        self.vars: list[Var] = []
        self.constraints: list[Constraint] = []
        self.objective: dict[int, int] = {}
        self.constant = 0

    # ----- building -------------------------------------------------------
    @property
    def n_vars(self) -> int:
        return len(self.vars)

    def new_bool(self, name: str, *, relaxable: bool = False) -> int:
        """A new Boolean; returns its (positive) literal."""
        self.vars.append(Var(name, relaxable))
        return len(self.vars)

    def clause(self, *lits: Lit) -> None:
        self.constraints.append(Clause(tuple(lits)))

    def implies(self, a: Lit, b: Lit) -> None:
        """``a -> b``."""
        self.clause(-a, b)

    def card(self, lits: Iterable[Lit], lb: int, ub: int) -> None:
        self.constraints.append(Card(tuple(lits), int(lb), int(ub)))

    def at_most_one(self, lits: Iterable[Lit]) -> None:
        self.card(lits, 0, 1)

    def exactly_one(self, lits: Iterable[Lit]) -> None:
        self.card(lits, 1, 1)

    def linear(self, terms: Iterable[tuple[int, int]], lb: int | None, ub: int | None,
               enforce: Lit | None = None) -> None:
        self.constraints.append(Linear(merge_terms((int(v), int(c)) for v, c in terms), lb, ub, enforce))

    def xor(self, lits: Iterable[Lit], parity: int) -> None:
        self.constraints.append(Xor(tuple(lits), int(parity) & 1))

    def add_objective(self, lit: Lit, coef: int) -> None:
        """Add ``coef * lit`` to the objective (``coef * (1 - v)`` for a negative literal)."""
        coef = int(coef)
        if coef == 0:
            return
        if lit < 0:
            self.constant += coef
            lit, coef = -lit, -coef
        self.objective[lit] = self.objective.get(lit, 0) + coef

    # ----- helpers for translations -----------------------------------------
    def kinds(self) -> set[str]:
        """Constraint kinds present."""
        return {KIND[type(c)] for c in self.constraints}

    def magnitude(self) -> int:
        """Largest absolute integer an objective or constraint sum can reach (for R1 checks)."""
        worst = sum(abs(c) for c in self.objective.values()) + abs(self.constant)
        for c in self.constraints:
            if isinstance(c, Linear):
                worst = max(worst, sum(abs(k) for _, k in c.terms) + abs(c.lb or 0) + abs(c.ub or 0))
        return worst


def activity_range(terms: Iterable[tuple[int, int]]) -> tuple[int, int]:
    """Smallest and largest value of ``sum coef * var`` over Boolean variables."""
    lo = sum(c for _, c in terms if c < 0)
    hi = sum(c for _, c in terms if c > 0)
    return lo, hi


def literal_terms(lits: Iterable[Lit]) -> tuple[list[tuple[int, int]], int]:
    """``sum lits`` as ``(terms, constant)``: a negative literal ``-v`` is ``1 - v``."""
    terms, const = [], 0
    for lit in lits:
        if lit > 0:
            terms.append((lit, 1))
        else:
            terms.append((-lit, -1))
            const += 1
    return terms, const


def as_linear(c: Clause | Card) -> Linear:
    """A clause or cardinality constraint as an (unenforced) linear constraint over variables."""
    lb, ub = (1, None) if isinstance(c, Clause) else (c.lb, c.ub)
    lb = lb if lb > 0 else None  # vacuous sides dropped
    ub = ub if ub is not None and ub < len(c.lits) else None
    terms, const = literal_terms(c.lits)
    return Linear(merge_terms(terms), None if lb is None else lb - const, None if ub is None else ub - const)


@dataclass
class Encoded:
    """A model, the variables its decoder reads, and the decoder back to a query or record."""

    model: Model
    outputs: tuple[int, ...]
    decode: Callable[[Mapping[int, int]], Any]


@dataclass
class Outcome:
    """What a backend reports for one model (picklable: it may cross a process boundary).

    ``values`` maps each output variable to its value in the best solution
    found (``None`` if there is none).  ``bound`` is a *valid* dual bound on
    ``sum coef * var`` (without the model constant), already widened by the
    backend's numerical tolerance; ``proven`` only if the solver proved
    optimality.
    """

    status: str
    values: dict[int, int] | None = None
    bound: float | None = None
    proven: bool = False
    nodes: int | None = None
    message: str = ""


# ----- translation helpers shared by the backends -------------------------------------------
def linearize(c: Clause | Card | Linear) -> list[Linear]:
    """Unenforced linear constraints over variables equivalent to ``c``.

    An enforced constraint gets the tightest big-M over Boolean variables:
    ``expr + (lb - min expr) (1 - e) >= lb`` and ``expr - (max expr - ub) (1 - e) <= ub``;
    a side that holds for every assignment is dropped.
    """
    if not isinstance(c, Linear):
        return [as_linear(c)]
    if c.enforce is None:
        return [c]
    lo, hi = activity_range(c.terms)
    (off_var, off_coef), off_const = _one_minus(c.enforce)  # 1 - e = off_coef * off_var + off_const
    out = []
    if c.lb is not None and lo < c.lb:
        big = c.lb - lo
        out.append(Linear(merge_terms(c.terms + ((off_var, big * off_coef),)), c.lb - big * off_const, None))
    if c.ub is not None and hi > c.ub:
        big = hi - c.ub
        out.append(Linear(merge_terms(c.terms + ((off_var, -big * off_coef),)), None, c.ub + big * off_const))
    return out


def _one_minus(lit: Lit) -> tuple[tuple[int, int], int]:
    """``1 - lit`` as ``((var, coef), constant)``."""
    return ((lit, -1), 1) if lit > 0 else ((-lit, 1), 0)


def merge_terms(terms: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """Terms with repeated variables summed and zero coefficients dropped."""
    merged: dict[int, int] = {}
    for v, c in terms:
        merged[v] = merged.get(v, 0) + c
    return tuple((v, c) for v, c in merged.items() if c)


def split_xor(c: Xor, fresh: Callable[[], int]) -> list[Xor]:
    """XORs of at most 3 literals equivalent to ``c``, chained through ``fresh()`` variables."""
    if len(c.lits) <= 3:
        return [c]
    out, acc = [], c.lits[0]
    for lit in c.lits[1:-1]:
        t = fresh()
        out.append(Xor((acc, lit, t), 0))
        acc = t
    out.append(Xor((acc, c.lits[-1]), c.parity))
    return out


def xor_clauses(c: Xor) -> list[tuple[Lit, ...]]:
    """Clauses forbidding each assignment of wrong parity (``2**(k-1)``; the LP hull for ``k <= 3``)."""
    k, out = len(c.lits), []
    for mask in range(2**k):
        if bin(mask).count("1") % 2 != c.parity:
            out.append(tuple(-lit if mask >> i & 1 else lit for i, lit in enumerate(c.lits)))
    return out
