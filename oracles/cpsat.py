"""OR-Tools CP-SAT backend.

The objective is integral, so CP-SAT's OPTIMAL (with ``absolute_gap_limit``
below 1 and no relative gap) is an exact proof and ``BestObjectiveBound()``
an exact integer bound.  Every call builds a fresh model and solver;
``Limits.workers`` search workers (1, the default, is deterministic),
``Limits.seed`` as the random seed, ``Limits.work_limit`` as the
deterministic time limit.  Clauses, cardinalities and XORs use the native
constraints (``AddBoolOr``, ``AddAtMostOne``, ``AddBoolXOr``), linear
constraints use ``OnlyEnforceIf`` for their enforcement literal.

CP-SAT's LP relaxation ignores XOR constraints and, at the default
linearization level, clauses and enforced linear constraints too; a
3-literal XOR therefore also gets its 4 hull clauses, and models with XORs
or linear constraints (parities, halfspaces) run at linearization level 2.
On ADULT features this made those players 5x (parity queries) to 500x
(parity records) faster; pure clause/cardinality models (conjunctions)
were slower at level 2, so they keep the default.
"""

from __future__ import annotations

from synthdp.oracles.base import Limits
from synthdp.oracles.encodings import EncodedOracle
from synthdp.oracles.model import MINIMIZE, Card, Clause, Linear, Model, Outcome, as_linear, xor_clauses

#: Stop once the gap is below this; the objective is integral, so this is exact optimality.
_ABSOLUTE_GAP = 0.5
#: XORs of at most this many literals also get their hull clauses (2**(k-1) of them; all the encoders' XORs).
_HULL_XOR = 3


class CPSATOracle(EncodedOracle):
    """Certified oracle on OR-Tools CP-SAT."""

    name = "cpsat"
    kinds = frozenset({"clause", "card", "linear", "xor"})
    #: CP-SAT's integers are int64; objective and constraint sums must not overflow (R1).
    integer_limit = 2**62
    #: Deterministic time (CP-SAT's unit, roughly seconds) per call when PRSMA gives none.
    default_work_limit = 10.0

    def load(self) -> None:
        import ortools.sat.python.cp_model  # noqa: F401

    def solve_model(self, model: Model, outputs: tuple[int, ...], limits: Limits,
                    time_budget: float | None, workdir: str) -> Outcome:
        from ortools.sat.python import cp_model

        cp = cp_model.CpModel()
        xs = [None] + [cp.NewBoolVar(f"v{i}") for i in range(1, model.n_vars + 1)]

        def lit(x: int):
            return xs[x] if x > 0 else xs[-x].Not()

        def weighted(terms):
            return cp_model.LinearExpr.WeightedSum([xs[v] for v, _ in terms], [c for _, c in terms])

        for c in model.constraints:
            if isinstance(c, Clause):
                cp.AddBoolOr([lit(x) for x in c.lits])
            elif isinstance(c, Card) and (c.lb, c.ub) == (0, 1):
                cp.AddAtMostOne([lit(x) for x in c.lits])
            elif isinstance(c, Card) and (c.lb, c.ub) == (1, 1):
                cp.AddExactlyOne([lit(x) for x in c.lits])
            elif isinstance(c, (Card, Linear)):
                lin = as_linear(c) if isinstance(c, Card) else c
                ct = cp.AddLinearConstraint(weighted(lin.terms), _INF_LO if lin.lb is None else lin.lb,
                                            _INF_HI if lin.ub is None else lin.ub)
                if isinstance(c, Linear) and c.enforce is not None:
                    ct.OnlyEnforceIf(lit(c.enforce))
            else:  # Xor
                if len(c.lits) <= _HULL_XOR:  # its hull clauses: exact, and in CP-SAT's LP at level 2
                    for clause in xor_clauses(c):
                        cp.AddBoolOr([lit(x) for x in clause])
                if c.lits:  # AddBoolXOr asserts XOR = 1: negate one literal for parity 0
                    lits = [lit(x) for x in c.lits]
                    if c.parity == 0:
                        lits[0] = lit(-c.lits[0])
                    cp.AddBoolXOr(lits)
        objective = weighted(list(model.objective.items()))
        cp.Minimize(objective) if model.sense == MINIMIZE else cp.Maximize(objective)

        solver = cp_model.CpSolver()
        params = solver.parameters
        params.num_workers = limits.workers
        params.random_seed = limits.seed
        params.absolute_gap_limit = _ABSOLUTE_GAP
        params.relative_gap_limit = 0.0
        if model.kinds() & {"xor", "linear"}:
            params.linearization_level = 2
        if time_budget is not None:
            params.max_time_in_seconds = time_budget
        if limits.work_limit is not None:
            params.max_deterministic_time = float(limits.work_limit)
        status = solver.Solve(cp)
        name = solver.StatusName(status).lower()
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return Outcome(name, nodes=solver.NumBranches(), message=f"CP-SAT: {name}")
        values = {v: int(solver.Value(xs[v])) for v in outputs}
        proven = status == cp_model.OPTIMAL
        return Outcome(name, values, solver.BestObjectiveBound(), proven, solver.NumBranches(),
                       "" if proven else "CP-SAT stopped before proving optimality")


_INF_LO, _INF_HI = -(2**62), 2**62
