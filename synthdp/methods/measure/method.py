"""Select-measure-estimate as a method (``method="measure"``): its suitability, plan, run and report section.

The algorithm is :mod:`synthdp.methods.measure.algorithm` (docs/privacy.md §8).  Its
variants are options of this one object, fixed by public inputs, not objects
of their own: **pure DP** (no delta: Laplace measurements through the run's
own ledger, marginal classes only, §10.2) and the **wide-table** spanning
step (§8.9), which the algorithm takes by itself from the public domain and
options.  A class that is not a marginal class is served over a backbone of
small marginals, the estimate's most probable records and optional RSPM
rounds (§8.1 (b)).

Under zCDP the method spends through a ``rho``-zCDP filter (§8.4) whose
whole ``(epsilon, delta)`` (the conversion of §8.5) is charged to the run's
ledger when the filter opens; private steps ahead of the method (domains,
cells, bounds: §10.3-10.5) may open it first and spend in it.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from synthdp.accounting.ledger import Ledger, round_up
from synthdp.accounting.zcdp import ZcdpLedger, rho_for_dp
from synthdp.core.errors import InputError
from synthdp.core.machine import machine_memory
from synthdp.core.parameters import Relation
from synthdp.mechanisms import rspm
from synthdp.methods.measure import footprint as sizes
from synthdp.methods.measure import algorithm as sme
from synthdp.methods.base import Choice, ErrorBound, Method, MethodInputs, MethodOutput, Suitability
from synthdp.methods.measure.coarse import CoarseViews
from synthdp.methods.measure.coverage import maximal_marginals, uses_covering_step
from synthdp.methods.measure.measurements import (MAX_MARGINALS, OracleSelection, backbone_marginals, candidate_weights,
                                                  workload_marginals)
from synthdp.methods.oracle_choice import MODE_MEANINGS, choose_oracle
from synthdp.oracles.base import Limits
from synthdp.queries.base import QueryClass

log = logging.getLogger(__name__)

#: The options select-measure-estimate reads for a class it selects from with RSPM (its oracle, Mode N).
ORACLE_OPTIONS = frozenset({"oracle", "time_limit"})
#: Cells select-measure-estimate may count up front over its candidate marginals (int64 each: 2 GB).
MAX_COUNTED_CELLS = 250_000_000


@dataclass(frozen=True)
class MeasurePlan:
    """Select-measure-estimate's inputs (docs/privacy.md §8.1), all public.

    ``rho`` is the zCDP budget the method's filter keeps to (§8.4): the
    largest ``rho`` whose conversion (§8.5) fits the method's ``(epsilon,
    delta)``, which is what the run's ledger is charged.
    """

    inputs: MethodInputs
    rho: Choice
    marginals: Choice
    options: Any
    #: Classes too large to enumerate: the RSPM selection (a ``measure.OracleSelection``), its mode and the
    #: probability reserved for its clips (docs/privacy.md §8.4); None for marginal classes.
    oracle: Choice | None = None
    mode: Choice | None = None
    clip_budget: Fraction = Fraction(0)
    #: Pure DP (docs/privacy.md §10.2): ``rho`` then holds the method's ``epsilon`` (Laplace measurements, the
    #: run's own ledger as the filter); reported as ``epsilon``.
    pure: bool = False
    #: The run's size before any private step: rounds, candidates per round, model cells, memory
    #: (a ``footprint.Footprint``).
    footprint: Choice | None = None
    #: Under zCDP: the ``(epsilon, delta)`` the filter's ``rho`` converts (§8.5), the reserves set aside; what a
    #: caller measuring several releases in one filter adds up before converting once (docs/privacy.md §12).
    converts: tuple[Fraction, Fraction] | None = None


def marginal_workload(query_class: QueryClass) -> list | None:
    """The marginals whose cells make up ``query_class``, or None if it is not a marginal class."""
    try:
        return workload_marginals(query_class, query_class.domain)
    except InputError:
        return None


def pure_bound(query_class: QueryClass, workload: list, relation: Relation, epsilon: Fraction) -> ErrorBound:
    """``A/n`` with ``A = k Delta_1 (ln(2C) + 1) / epsilon + 1``: the expected largest discrete Laplace draw when the
    class's ``k`` marginals (``C`` cells) are measured once each at ``epsilon / k`` (docs/privacy.md §10.2)."""
    cells = sum(query_class.domain.cells(m) for m in workload)
    l1 = 1 if relation == Relation.ADD_REMOVE else 2
    a = len(workload) * l1 * (math.log(2 * cells) + 1) / float(epsilon) + 1
    return ErrorBound(a, 0.0, f"measuring the workload once: E max error <= {a:.4g}/n")


def check_sizes(domain, candidates, views: CoarseViews) -> None:
    """Refuse, before any private step, candidate marginals whose counts would not fit in memory (public sizes only).

    Select-measure-estimate counts every candidate marginal once, through
    its coarse twin when it is read through it only (``views``, docs/privacy.md
    §8.11) (``MAX_COUNTED_CELLS`` int64 cells at most); the message names the largest
    marginal and the attribute that makes it large, and what to change.
    """
    cells = {r: views.counted_cells(r) for r in candidates}
    total = sum(cells.values())
    if total <= MAX_COUNTED_CELLS:
        return
    largest = max(cells, key=cells.get)
    widest = max(largest, key=lambda a: domain.sizes[a])
    name = domain.names[widest]
    raise InputError(
        f"select-measure-estimate would count {total:,} cells ({total * 8 / 2**30:.1f} GiB) over its candidate "
        f"marginals, more than {MAX_COUNTED_CELLS:,}; the largest, on {[domain.names[a] for a in largest]}, has "
        f"{cells[largest]:,} cells, and column {name!r} has {domain.sizes[widest]:,} values. Nothing was released: "
        f"give "
        f"{name!r} fewer bins (e.g. bins={{{name!r}: 100}}, CLI --bins {name}=100), leave its bins out so that "
        "PrivTree chooses its cells (docs/privacy.md §10.3), or use a smaller query class (e.g. marginals:2)")


def footprint_choice(inputs: MethodInputs, weights, options, oracle: bool) -> Choice:
    """The run's size (rounds, candidates per round, model cells, memory) from public inputs; refuses a run
    past the machine's memory before any private step (:mod:`synthdp.methods.measure.footprint`)."""
    size = sizes.footprint(inputs.query_class.domain, list(weights), options, n_rows=inputs.n_rows, oracle=oracle,
                           pure=inputs.pure)
    sizes.check_fits(size, machine_memory())
    return Choice(size, f"{size.summary()}; from the domain, the options and n_rows only"
                  + ("" if inputs.n_rows else f", plus {size.bytes_per_output_row} bytes per output record"))


def covering_note(domain, workload, options, *, pure: bool) -> str:
    """The plan's words for the covering step (docs/privacy.md §8.10): from the domain, workload, options and the
    noise family (pure DP: discrete Laplace)."""
    candidates = list(candidate_weights(workload))
    if uses_covering_step(len(domain), candidates, options, oracle=False, light_tailed=not pure):
        return (f"; the rounds spend {1 - options.cover_share} of the budget, the rest measures once each workload "
                "marginal no measurement of the rounds contains (docs/privacy.md §8.10)")
    if pure and uses_covering_step(len(domain), candidates, options, oracle=False, light_tailed=True):
        return (f"; no covering step: under pure DP each of the {len(maximal_marginals(candidates))} workload "
                f"marginals' measurements would cost less than {options.cover_min_ratio} times a round's, and their "
                "Laplace noise would outweigh them; the rounds spend the whole budget, "
                f"{options.uncovered_pure_selection_share} of each round selecting (docs/privacy.md §8.10)")
    return ""


def joint_warning(measurements, domain, workload) -> list[str]:
    """A warning when the workload has marginals of two or more columns but the rounds selected none: at this budget
    the expected noise of every such candidate (``sqrt(2/pi) sigma`` a cell, §8.1) outweighed what it could show,
    so the joint distribution rests on the covering step's low-precision measurements alone.  Usually the columns
    have too many cells for the budget (docs/benchmarks.md#measure-defaults: 14 numeric columns of 64 PrivTree
    cells lost their correlations; such columns are also measured through groups of their cells,
    docs/privacy.md §8.11, and the warning fires rarely for them).  Read off the released measurements and
    the public domain: post-processing."""
    if not workload or max(len(m) for m in workload) < 2:
        return []
    if any(m.selected_by in ("exponential", "record", "rspm") and len(m.attrs) >= 2 for m in measurements):
        return []
    widest = sorted(range(len(domain)), key=lambda a: -domain.sizes[a])[:3]
    names = ", ".join(f"{domain.names[a]!r} ({domain.sizes[a]} cells)" for a in widest)
    finer = domain.sizes[widest[0]] > COARSE_CELLS
    return [f"the rounds selected no marginal of two or more columns: at this budget each one's expected noise "
            f"outweighed what it could show, so the joint distribution rests on the covering step's low-precision "
            f"measurements (the columns with most cells: {names}). A larger epsilon helps"
            + (f", and so do fewer cells (for a numeric column CLI --bins {domain.names[widest[0]]}={COARSE_CELLS} "
               "or --discretise equal-width, for a text column fewer categories)" if finer else "")]


#: Cells a column may have before :func:`joint_warning` suggests fewer (8 PrivTree cells a column kept the
#: correlations of 14 numeric columns at eps 1 that 64 lost, docs/benchmarks.md#measure-defaults).
COARSE_CELLS = 8


def plan_pure(inputs: MethodInputs, options) -> MeasurePlan:
    """Pure DP (docs/privacy.md §10.2): the whole epsilon through the run's ledger; marginal classes only."""
    qc = inputs.query_class
    workload = marginal_workload(qc)
    if workload is None:
        raise InputError(f"method 'measure' under pure DP (no delta) serves marginal classes only, and "
                         f"{qc.name} is not one: its RSPM and record rounds need zCDP "
                         "(docs/privacy.md §10.2); pass a delta (e.g. 1e-9) or use method='game'")
    why = ("pure DP: the whole epsilon, spent through the run's own ledger, which refuses any step "
           "past it before its noise is drawn (Laplace measurements, docs/privacy.md §10.2, Theorem 10.2)")
    marginals = Choice(len(workload), f"the marginals whose cells make up {qc.name}; candidates are them and "
                                      "their subsets" + covering_note(qc.domain, workload, options, pure=True))
    return MeasurePlan(inputs, Choice(inputs.epsilon, why), marginals, options, pure=True,
                       footprint=footprint_choice(inputs, candidate_weights(workload), options, False))


def oracle_selection(inputs: MethodInputs, options) -> tuple[list, Choice, Choice, Choice, int]:
    """A class that is not a marginal class: its backbone marginals, what they are, the RSPM selection, its mode
    and the number of RSPM calls (docs/privacy.md §8.1 (b)); refuses a class not closed under complement."""
    qc, settings = inputs.query_class, inputs.options
    if not qc.complement_closed:
        raise InputError(f"method 'measure' selects from {qc.name} with RSPM, which needs the "
                         "class closed under complement; drop closed=False")
    rspm_rounds = (f"RSPM over the whole class every {options.oracle_every}th round" if options.oracle_every
                   else "no RSPM rounds (they did not pay for themselves on the tuning set, docs/benchmarks.md#measure-defaults)")
    workload = backbone_marginals(qc.domain, options.backbone_width)
    marginals = Choice(len(workload),
                       f"{qc.name} is not a marginal class: the exponential mechanism scores "
                       f"the {options.backbone_width}-way marginals and their subsets, and every "
                       f"{options.record_every}th round the estimate's {options.record_candidates} most probable "
                       f"records; {rspm_rounds}")
    found, why = choose_oracle(settings["oracle"], qc, "query player")
    letter = "N" if settings["time_limit"] is not None and options.oracle_every else "E"
    oracle = Choice(OracleSelection(qc, found, letter, None if letter == "E" else
                                    Limits(time_limit=settings["time_limit"])), why)
    mode = (Choice(letter, MODE_MEANINGS[letter]) if options.oracle_every
            else Choice("-", "no RSPM rounds: no query oracle runs (time_limit, if given, is not used)"))
    rounds = options.max_rounds or options.rounds_per_attribute * len(qc.domain)
    calls = rounds // options.oracle_every if options.oracle_every else 0
    return workload, marginals, oracle, mode, calls


def plan_zcdp(inputs: MethodInputs, options) -> MeasurePlan:
    """Under zCDP: the filter's ``rho`` (the conversion of what is left, §8.5) and what the method selects from.

    Any class that is not a marginal class is served with RSPM rounds over it;
    the probability of their clips is then reserved out of ``delta`` first,
    ``(1 + e^eps)`` times the clip budget (Theorem 8.1), and only the rest is
    converted to ``rho``.
    """
    qc, epsilon, delta = inputs.query_class, inputs.epsilon, inputs.delta
    workload = marginal_workload(qc)
    oracle = mode = None
    clip_budget = reserve = Fraction(0)
    if workload is not None:
        marginals = Choice(len(workload), f"the marginals whose cells make up {qc.name}; candidates are them and "
                                          "their subsets" + covering_note(qc.domain, workload, options, pure=False))
    else:
        workload, marginals, oracle, mode, calls = oracle_selection(inputs, options)
        clip_budget = calls * rspm.CLIP_BOUND
        reserve = round_up((1 + math.exp(float(epsilon))) * float(clip_budget))
        if reserve >= delta:
            raise InputError(f"delta={float(delta):.3g} is too small for {calls} RSPM calls, whose clips need "
                             f"{float(reserve):.3g} of it (docs/privacy.md §8.4); raise delta")
    weights = candidate_weights(workload)
    check_sizes(qc.domain, weights, CoarseViews.for_options(qc.domain, options))
    converts = (epsilon, delta - reserve - inputs.filter_delta)
    fixed = inputs.filter_budget is not None
    rho = (inputs.filter_budget if fixed else rho_for_dp(*converts)) - inputs.filter_rho
    why_rho = (("this view's public share of the rho of one conversion (docs/privacy.md §8.5) of the budget of both "
                "linked views, measured in one filter (§12)" if fixed else
                "the largest rho whose conversion (docs/privacy.md §8.5, CKS20 Corollary 13) fits the method's "
                "(epsilon, delta)") + (f" less {float(reserve):.3g} of delta for the RSPM clips" if reserve else "")
               + (f" less {float(inputs.filter_delta):.3g} for partition selection (§10.5, §11.2)"
                  if inputs.filter_delta else "") + ", rounded down"
               + (f", less the {float(inputs.filter_rho):.4g} spent in the same filter before the method (§10.3, "
                  "§10.5, §11.2)" if inputs.filter_rho else ""))
    return MeasurePlan(inputs, Choice(rho, why_rho), marginals, options, oracle, mode, clip_budget,
                       footprint=footprint_choice(inputs, weights, options, oracle is not None), converts=converts)


class MeasureMethod(Method):
    """Select-measure-estimate (docs/privacy.md §8); pure DP (§10.2) and the spanning step (§8.9) are its options."""

    name = "measure"
    title = "select-measure-estimate"
    options = ("measure_options",)
    #: Its zCDP budget, what its filter spent, every paid measurement and the filter's ledger; the probability
    #: reserved for RSPM clips when RSPM selects measurements (docs/privacy.md §8.4).
    release_defaults = dict(rounds=None, rho_budget=None, rho_spent=None, measurements=[], zcdp_ledger=[],
                            clip_budget=None, cover_skipped=None)

    def reads(self, query_class: QueryClass) -> frozenset[str]:
        """Its settings; and the oracle options for the RSPM rounds over a class that is not a marginal class
        (§8.1 (b))."""
        return frozenset(self.options) | (frozenset() if marginal_workload(query_class) is not None
                                          else ORACLE_OPTIONS)

    def suitability(self, inputs: MethodInputs) -> Suitability:
        """Where it serves: every marginal class, and with a delta every class whose backbone fits; under pure DP
        with the bound ``auto`` compares (at the run's whole epsilon, §10.2)."""
        qc = inputs.query_class
        workload = marginal_workload(qc)
        if inputs.pure and workload is None:
            return Suitability(False, "pure DP: select-measure-estimate serves only marginal classes under pure "
                                      "DP (docs/privacy.md §10.2)")
        if inputs.pure:
            return Suitability(True, "pure DP, marginal class: select-measure-estimate with Laplace measurements",
                               pure_bound(qc, workload, inputs.relation, inputs.budget_epsilon))
        if workload is not None:
            return Suitability(True, "a marginal class with a delta: select-measure-estimate (docs/privacy.md §8) "
                                     "is several times more accurate than the game on every marginal benchmark")
        backbone = len(backbone_marginals(qc.domain, sme.MeasureOptions().backbone_width))
        if backbone > MAX_MARGINALS:  # the wide path (docs/privacy.md §8.9) is not measured on these classes yet
            return Suitability(False, f"{qc.name} is not a marginal class and its {backbone} backbone marginals "
                                      f"exceed {MAX_MARGINALS}, the most select-measure-estimate selects from")
        return Suitability(True, f"{qc.name} with a delta: select-measure-estimate over a backbone of small "
                                 "marginals and the estimate's most probable records; its certified error over all "
                                 "conjunctions is a small fraction of the game's (docs/benchmarks.md)")

    def plan(self, inputs: MethodInputs) -> MeasurePlan:
        """Its zCDP budget and what it selects from (:func:`plan_zcdp`), or its pure-DP plan (:func:`plan_pure`)."""
        given = inputs.options.get("measure_options")
        options = sme.MeasureOptions() if given is None else given
        if inputs.released_columns:  # a linked run's joined view (docs/privacy.md §12 step 2)
            options = replace(options, released_columns=inputs.released_columns)
        return plan_pure(inputs, options) if inputs.pure else plan_zcdp(inputs, options)

    def zcdp_budget(self, plan: MeasurePlan) -> Fraction | None:
        return None if plan.pure else plan.rho.value

    def converted_budget(self, plan: MeasurePlan) -> tuple[Fraction, Fraction] | None:
        return plan.converts

    def open_filter(self, plan: MeasurePlan, ledger: Ledger) -> ZcdpLedger:
        """The zCDP filter (docs/privacy.md §8.4); its whole ``(epsilon, delta)`` goes on ``ledger``.

        The filter's ``rho`` is the plan's plus what the steps ahead already
        spent in it (docs/privacy.md §10.3): the conversion (§8.5) of the method's budget.
        """
        inputs = plan.inputs
        rho = plan.rho.value + inputs.filter_rho
        how = ("this view's share of one filter for both linked views, whose whole rho is converted once "
               "(docs/privacy.md §12)" if inputs.filter_budget is not None else "converted by §8.5")
        ledger.spend("select-measure-estimate", inputs.epsilon, inputs.delta, inputs.relation,
                     f"rho={float(rho):.6g}-zCDP by the filter (docs/privacy.md §8.4), {how}")
        return ZcdpLedger(rho, plan.clip_budget, contribution_bound=ledger.contribution_bound)

    def run(self, plan: MeasurePlan, real, ledger, rng, zcdp=None) -> MethodOutput:
        """Select-measure-estimate within the plan's ``rho``, the filter charged to ``ledger`` when it opens.

        ``zcdp`` is the filter when it was opened earlier (PrivTree's trees are
        its first steps).  Under pure DP (§10.2) the run's ledger is the filter
        itself: every selection and every Laplace measurement is recorded there
        with its ``epsilon``.
        """
        inputs, rho = plan.inputs, plan.rho.value
        if plan.footprint is not None:
            log.info("measure: %s", plan.footprint.reason)
        common = dict(relation=inputs.relation, rng=rng, n_rows=inputs.n_rows, options=plan.options,
                      progress=inputs.progress)
        if plan.pure:
            result = sme.measure(real, inputs.query_class, budget=inputs.epsilon, ledger=ledger, pure=True, **common)
            release = dict(rounds=result.rounds, measurements=[m.to_dict() for m in result.measurements],
                           cover_skipped=result.cover_skipped)
            selected = [",".join(m.names) for m in result.measurements if m.selection_epsilon is not None]
            workload = workload_marginals(inputs.query_class, real.domain)
            return MethodOutput(result.records, ledger, rng.numpy_generator(), False, selected, release, {}, [],
                                joint_warning(result.measurements, real.domain, workload), result.estimate)
        oracle = plan.oracle
        filter_ledger = zcdp if zcdp is not None else self.open_filter(plan, ledger)
        result = sme.measure(real, inputs.query_class, budget=rho, ledger=filter_ledger,
                             oracle=None if oracle is None else oracle.value, **common)
        release = dict(rho_budget=str(rho), rho_spent=str(result.rho_spent), rounds=result.rounds,
                       measurements=[m.to_dict() for m in result.measurements],
                       zcdp_ledger=[e.to_dict() for e in filter_ledger.events], cover_skipped=result.cover_skipped)
        if oracle is not None:
            release["clip_budget"] = str(plan.clip_budget)
        selected = [m.query or ",".join(m.names) for m in result.measurements if m.selection_epsilon is not None]
        conditional = oracle is not None and oracle.value.mode == "N"
        warned = [] if oracle is not None else \
            joint_warning(result.measurements, real.domain, workload_marginals(inputs.query_class, real.domain))
        return MethodOutput(result.records, ledger, rng.numpy_generator(), conditional, selected, release, {}, [],
                            warned, result.estimate)

    def choices(self, plan: MeasurePlan) -> dict[str, dict]:
        out = {"epsilon" if plan.pure else "rho": plan.rho.to_dict(), "marginals": plan.marginals.to_dict()}
        if plan.footprint is not None:
            out["footprint"] = {"value": plan.footprint.value.to_dict(), "reason": plan.footprint.reason}
        if plan.oracle is not None:
            out["query_oracle"] = {"value": plan.oracle.value.oracle.name, "reason": plan.oracle.reason}
            out["mode"] = plan.mode.to_dict()
        return out

    def rows(self, plan: MeasurePlan) -> Choice:
        return Choice("noisy total", "as many records as the fitted model's noisy total count (released, paid "
                                     "for); pass n_rows for another size")

    def summary(self, release) -> str:
        r = release
        alone = sum(1 for m in r.measurements if m.get("query"))
        by = {k: sum(1 for m in r.measurements if m.get("selected_by") == k) for k in ("record", "rspm")}
        wide = sum(1 for m in r.measurements if m.get("estimator", "graphical model") != "graphical model")
        what = f"{len(r.measurements) - alone} marginals" + (f" and {alone} single queries" if alone else "")
        chosen = "".join(f", {n} chosen by {k}" for k, n in by.items() if n)
        again = sum(1 for m in r.measurements if m.get("selected_by") == "cover" and len(m["marginal"]) == 1)
        covered = sum(1 for m in r.measurements if m.get("selected_by") == "cover") - again
        chosen += (f", then the one-way marginals of {again} ordered columns again (the released total is small "
                   "against their noise: expect figures to move from seed to seed)" if again else "")
        chosen += f", then {covered} the rounds left out measured once (covering step)" if covered else ""
        chosen += (f", {r.cover_skipped} workload marginals skipped (their noise would exceed the released total over "
                   "their cells)" if r.cover_skipped else "")
        grouped = sum(1 for m in r.measurements if m.get("groups"))
        chosen += f"; {grouped} read numeric columns through groups of their cells" if grouped else ""
        served = (f"a sample of the graphical model reweighted to every measurement ({wide} not local)" if wide
                  else "the fitted graphical model")
        cost = ("pure DP, discrete Laplace measurements" if r.rho_budget is None else
                f"zCDP rho={float(Fraction(r.rho_spent)):.4g} of {float(Fraction(r.rho_budget)):.4g}")
        return (f"select-measure-estimate: {what} measured in {r.rounds} rounds{chosen} ({cost}); the records are "
                f"drawn from {served}")
