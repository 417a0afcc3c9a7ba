"""CBC backend (the CBC binary bundled with PuLP).

CBC is a floating-point MIP solver, so its certificate is accepted only with
a numerical margin (docs/privacy.md §2.7 R3): the dual bound passed on
is CBC's bound widened by ``tau = tolerance * (1 + sum |objective coefficients|)``,
and ``synthdp.oracles.base`` then requires ``F(q) <= ceil(LB - tau)``.  A run counts
as proven only if CBC's log says "Optimal solution found" *and* PuLP's
``sol_status`` is optimal (PuLP's ``status`` is "Optimal" after a time
limit too).  CBC's best bound is read from its log ("Lower bound" /
"Upper bound" after a stopped search; the objective value after a
completed one, with gap limits 0).

CBC has overrun its ``-sec`` limit by minutes on large models, so the hard
wall-clock limit is the watchdog's kill of the whole process group.
``Limits.work_limit`` is CBC's node limit (``maxNodes``), ``Limits.seed``
its ``randomCbcSeed`` (plus one: CBC reads 0 as "seed from the clock").

Relaxable model variables are continuous; clauses, cardinalities, enforced
linear constraints (tightest big-M) and 3-literal XORs (their LP hull) are
linear rows.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import warnings

from synthdp.core.extras import require
from synthdp.oracles.base import Limits
from synthdp.oracles.encodings import EncodedOracle
from synthdp.oracles.model import (MINIMIZE, Clause, Linear, Model, Outcome, Xor, as_linear, linearize, split_xor,
                           xor_clauses)

log = logging.getLogger(__name__)


def _pulp():
    """Import PuLP; OR-Tools first if HiGHS is installed (PuLP's HiGHS import breaks a later OR-Tools import)."""
    if importlib.util.find_spec("highspy") is not None and importlib.util.find_spec("ortools") is not None:
        import ortools.sat.python.cp_model  # noqa: F401

    return require("pulp", "the cbc oracle")


class CBCOracle(EncodedOracle):
    """Certified oracle on PuLP's bundled CBC."""

    name = "cbc"
    kinds = frozenset({"clause", "card", "linear", "xor"})
    #: Floating-point solver: keep every coefficient and objective value below 2**50 (R1).
    integer_limit = 2**50
    #: Branch-and-bound nodes per call when PRSMA gives no work limit.
    default_work_limit = 10_000

    def __init__(self, tolerance: float = 1e-6):
        #: CBC's absolute optimality tolerance per unit of objective scale.
        self.tolerance = tolerance

    def load(self) -> None:
        _pulp()

    def solve_model(self, model: Model, outputs: tuple[int, ...], limits: Limits,
                    time_budget: float | None, workdir: str) -> Outcome:
        pulp = _pulp()
        prob = pulp.LpProblem("oracle", pulp.LpMinimize if model.sense == MINIMIZE else pulp.LpMaximize)
        xs = [None] + [prob.add_variable(f"v{i}", 0, 1, pulp.LpContinuous if var.relaxable else pulp.LpBinary)
                       for i, var in enumerate(model.vars, 1)]

        def fresh() -> int:
            xs.append(prob.add_variable(f"v{len(xs)}", 0, 1, pulp.LpContinuous))
            return len(xs) - 1

        rows: list[Linear] = []
        for c in model.constraints:
            if isinstance(c, Xor):
                rows.extend(as_linear(Clause(cl)) for part in split_xor(c, fresh) for cl in xor_clauses(part))
            else:
                rows.extend(linearize(c))
        for row in rows:
            if not row.terms:
                if (row.lb is not None and row.lb > 0) or (row.ub is not None and row.ub < 0):
                    return Outcome("infeasible", message="a constant constraint is violated")
                continue
            expr = pulp.LpAffineExpression([(xs[v], c) for v, c in row.terms])
            if row.lb is not None and row.lb == row.ub:
                prob += expr == row.lb
            else:
                if row.lb is not None:
                    prob += expr >= row.lb
                if row.ub is not None:
                    prob += expr <= row.ub
        prob += pulp.LpAffineExpression([(xs[v], c) for v, c in model.objective.items()])

        log_path = os.path.join(workdir, "cbc.log")
        # "-threads 1" is not sequential CBC: it runs the threaded branch and bound with one worker,
        # whose join (CbcBaseModel::waitForThreadsInTree) stalled single solves for 10-20 s here.
        threads = limits.workers if limits.workers > 1 else None
        with warnings.catch_warnings():  # PuLP 3 deprecates its bundled CBC (to be removed in PuLP 4)
            warnings.simplefilter("ignore", DeprecationWarning)
            solver = pulp.PULP_CBC_CMD(msg=False, timeLimit=time_budget, gapRel=0.0, gapAbs=0.0, threads=threads,
                                       maxNodes=None if limits.work_limit is None else int(limits.work_limit),
                                       options=[f"randomCbcSeed {limits.seed + 1}"], logPath=log_path)
        solver.tmpDir = workdir
        prob.solve(solver)
        with open(log_path) as fh:
            report = _parse_log(fh.read())
        result = report.get("result", "no result line in the CBC log")
        if prob.sol_status not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
            return Outcome(result, nodes=report.get("nodes"), message=f"CBC: {result}")
        # a variable in no row or objective term is not written to CBC (value None): any value is optimal
        values = {v: int(round(xs[v].varValue or 0)) for v in outputs}
        proven = prob.sol_status == pulp.LpSolutionOptimal and result.startswith("Optimal solution found")
        bound = report.get("objective") if proven else report.get("bound")
        if bound is not None:
            tau = self.tolerance * (1 + sum(abs(c) for c in model.objective.values()))
            bound = bound - tau if model.sense == MINIMIZE else bound + tau
        return Outcome(result, values, bound, proven and bound is not None, report.get("nodes"),
                       "" if proven else f"CBC: {result}")


_LOG_FIELDS = {
    "result": (re.compile(r"^Result - (.+?)\s*$", re.M), str),
    "objective": (re.compile(r"^Objective value:\s+(\S+)", re.M), float),
    "bound": (re.compile(r"^(?:Lower|Upper) bound:\s+(\S+)", re.M), float),
    "nodes": (re.compile(r"^Enumerated nodes:\s+(\d+)", re.M), int),
}


def _parse_log(text: str) -> dict:
    """The final summary of a CBC log: result line, objective, best bound, nodes."""
    out = {}
    for key, (pattern, cast) in _LOG_FIELDS.items():
        match = pattern.search(text)
        if match:
            try:
                out[key] = cast(match.group(1))
            except ValueError:
                log.warning("unreadable %s in the CBC log: %r", key, match.group(1))
    return out
