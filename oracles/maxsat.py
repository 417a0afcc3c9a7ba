"""MaxSAT backend: python-sat's RC2 (core-guided, exact).

Translation of the neutral model to a weighted CNF:

* clauses are hard clauses; cardinality constraints go through
  ``pysat.card.CardEnc`` (a clause for "at least one", pairwise clauses for a
  short "at most one", sequential counters otherwise);
* XORs are chained into 3-literal XORs (Tseitin variables) and each one is
  written as its 4 clauses;
* the objective becomes soft unit clauses with integer weights: ``c v`` with
  ``c > 0`` is the soft clause ``NOT v`` of weight ``c``; with ``c < 0`` it is
  ``c + |c| (1 - v)``, the soft clause ``v`` of weight ``|c|`` and a constant.
  A maximisation is negated first.

RC2's finished ``compute()`` is an optimality proof and its cost is exact
(Python integers), so the bound is the optimum itself.  ``compute()`` returns
``None`` both for an unsatisfiable formula and for an exhausted budget; the
SAT oracle's status (``None`` = undecided) tells them apart.
``Limits.work_limit`` is a conflict budget over the whole run (deterministic;
core exhaustion is then off, as it cannot tell an exhausted budget from
UNSAT); wall-clock limits are enforced by the watchdog's kill, as RC2 has
none.

General linear constraints (halfspaces) would need pseudo-Boolean
encodings; ``pysat.pb`` needs the optional ``pindakaas`` package (python-sat
1.9; ``pypblib`` before), which is not a dependency, and an untested PB path
could certify wrong optima.  So ``supports()`` is False for classes that
need linear constraints (logged once), and parity queries get the XOR-chain
formulation instead of the counting one.
"""

from __future__ import annotations

import itertools

from synthdp.core.extras import require
from synthdp.oracles.base import Limits
from synthdp.oracles.encodings import EncodedOracle
from synthdp.oracles.model import MINIMIZE, Card, Clause, Model, Outcome, Xor, split_xor, xor_clauses

#: "At most one" over at most this many literals is written pairwise (no auxiliary variables).
_PAIRWISE = 6


class MaxSATOracle(EncodedOracle):
    """Certified oracle on RC2 (python-sat)."""

    name = "maxsat"
    kinds = frozenset({"clause", "card", "xor"})
    #: RC2's weights and costs are Python integers; kept within int64 like the other exact backends.
    integer_limit = 2**62
    #: SAT conflicts per call when PRSMA gives no work limit.
    default_work_limit = 10**6

    def __init__(self, solver: str = "g3"):
        #: The SAT solver inside RC2 (a python-sat solver name).
        self.solver = solver

    def load(self) -> None:
        require("pysat.card", "the maxsat oracle")
        require("pysat.examples.rc2", "the maxsat oracle")

    def solve_model(self, model: Model, outputs: tuple[int, ...], limits: Limits,
                    time_budget: float | None, workdir: str) -> Outcome:
        from pysat.examples.rc2 import RC2
        from pysat.formula import WCNF, IDPool

        pool = IDPool(start_from=model.n_vars + 1)
        wcnf = WCNF()
        for c in model.constraints:
            for clause in _clauses(c, pool):
                wcnf.append(list(clause))
        sign = 1 if model.sense == MINIMIZE else -1
        shift = 0
        for v, coef in model.objective.items():
            coef *= sign
            if coef > 0:
                wcnf.append([-v], weight=coef)
            elif coef < 0:
                wcnf.append([v], weight=-coef)
                shift += coef

        # Core exhaustion reads an undecided (budget-exhausted) SAT call as UNSAT and raises the
        # cost, so it is used only without a conflict budget.
        budget = None if limits.work_limit is None else int(limits.work_limit)
        with RC2(wcnf, solver=self.solver, adapt=True, exhaust=budget is None) as rc2:
            if budget is not None:
                rc2.oracle.conf_budget(budget)
            found = rc2.compute()
            conflicts = rc2.oracle.accum_stats().get("conflicts")
            if found is None:
                if rc2.oracle.get_status() is None:
                    return Outcome("work limit", nodes=conflicts, message="RC2 conflict budget exhausted")
                return Outcome("infeasible", nodes=conflicts, message="the hard constraints are unsatisfiable")
            cost = rc2.cost
        true = {lit for lit in found if lit > 0}
        values = {v: int(v in true) for v in outputs}
        return Outcome("optimal", values, sign * (shift + cost), True, conflicts)


def _clauses(c, pool) -> list[list[int]]:
    """CNF of one model constraint (auxiliary variables from ``pool``)."""
    if isinstance(c, Clause):
        return [list(c.lits)]
    if isinstance(c, Xor):
        return [list(cl) for part in split_xor(c, pool.id) for cl in xor_clauses(part)]
    if isinstance(c, Card):
        return _card(c, pool)
    raise TypeError(f"the maxsat backend cannot translate {type(c).__name__} constraints")


def _card(c: Card, pool) -> list[list[int]]:
    """CNF of ``lb <= #true <= ub``."""
    from pysat.card import CardEnc, EncType

    lits, n = list(c.lits), len(c.lits)
    lb, ub = max(c.lb, 0), min(c.ub, n)
    if lb > ub:
        return [[]]
    if lb == n:
        return [[lit] for lit in lits]
    if ub == 0:
        return [[-lit] for lit in lits]
    out: list[list[int]] = []
    if lb == 1:
        out.append(lits)
    elif lb > 1:
        out += CardEnc.atleast(lits, lb, vpool=pool, encoding=EncType.seqcounter).clauses
    if ub == 1 and n <= _PAIRWISE:
        out += [[-a, -b] for a, b in itertools.combinations(lits, 2)]
    elif ub < n:
        out += CardEnc.atmost(lits, ub, vpool=pool, encoding=EncType.seqcounter).clauses
    return out
