"""Select-measure-estimate with RSPM-selected measurements (docs/privacy.md §8.1 (b), §8.2 (M3), §8.3, §8.4, §8.8).

A class no marginal workload covers (here: conjunctions of every width on
five binary attributes, closed under complement) drives the loop with the
exponential mechanism over a backbone of small marginals and, every
``oracle_every``-th round, RSPM over the whole class against ``N`` records
drawn from the current estimate.  The tests intercept the wires between the
loop and its mechanisms (what RSPM is handed, what the Gaussian sampler is
asked for, what the ledgers record) and compare them with the specification:
``Delta = 2N`` under both relations (checked by brute force over neighbours),
``eps**2/2`` per RSPM call, the widened group's sensitivity, the clip budget
reserved out of ``delta``, and the add/remove rule that nothing unpaid depends
on the true ``n``.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

import synthdp
import synthdp.mechanisms.rspm as rspm_module
import synthdp.methods.measure.method as measure_method
import synthdp.plan as plan_module
from adversarial_oracle import AdversarialOracle
from synthdp.config import SynthesisConfig
from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError, PrivacyError
from synthdp.accounting.ledger import ADD_REMOVE, REPLACE_ONE, round_up
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.mechanisms.rspm import CLIP_BOUND
from synthdp.accounting.zcdp import ZcdpLedger, gaussian_rho, pure_rho, rho_for_dp
from synthdp.methods.measure import estimators
from synthdp.methods.measure import algorithm, rounds, state
from synthdp.methods.measure.estimators import EstimatorSettings, NoisyMarginal
from synthdp.methods.measure.algorithm import measure
from synthdp.methods.measure.measurements import REWEIGHTED_SAMPLE, OracleSelection, query_attributes
from synthdp.methods.measure.settings import MeasureOptions
from synthdp.methods.game.players import game_instance
from synthdp.methods.measure.reweight import WeightedSample, fit_weights, marginal_group, query_group
from synthdp.oracles.base import Limits
from synthdp.oracles.brute import BruteForceOracle
from synthdp.plan import make_plan
from synthdp.queries.complement import ComplementClosed, Not
from synthdp.queries.conjunctions import Conjunction, Conjunctions
from synthdp.queries.disjunctions import Disjunction, Disjunctions
from synthdp.queries.halfspaces import Halfspace, Halfspaces
from synthdp.queries.parities import Parities, Parity
from synthdp.queries.spec import parse_query_class

DOMAIN = Domain(tuple("abcde"), (2,) * 5)
#: Conjunctions of every width with their complements: 484 queries, no marginal workload (served by RSPM).
QC = parse_query_class("conjunctions", DOMAIN)
M = QC.separator().m
#: widen_cells=8: a query on at most 3 binary attributes is widened to its marginal, a wider one measured alone.
#: record_every=0: only the backbone's EM rounds and the RSPM rounds (2, 4, 6) run.
OPTIONS = MeasureOptions(oracle_every=2, record_every=0, max_rounds=6, oracle_samples=40, widen_cells=8, support=2000,
                         support_iters=20, support_final_iters=40,
                         estimator=EstimatorSettings(iters=20, final_iters=40, scoring_sample=1000))
N = OPTIONS.oracle_samples
CALLS = OPTIONS.max_rounds // OPTIONS.oracle_every  # the RSPM rounds of a full run: rounds 2, 4, 6
BUDGET = Fraction(1)
RELATIONS = [(ADD_REMOVE, 1), (REPLACE_ONE, 2)]  # and Delta2**2 of a marginal (docs/privacy.md §8.3)
NARROW = Conjunction(((0, 1), (2, 0)))  # attributes (0, 2): a marginal of 4 cells
WIDE = Conjunction(tuple((a, 1) for a in range(5)))  # all five attributes: 32 cells > widen_cells


def table(n: int = 300, seed: int = 0) -> AggregatedData:
    gen = np.random.default_rng(seed)
    a = gen.integers(0, 2, n)
    b = a ^ (gen.random(n) < 0.2)
    c = b ^ (gen.random(n) < 0.2)
    d = gen.integers(0, 2, n)
    e = (a & d) ^ (gen.random(n) < 0.1)
    return AggregatedData.from_codes(DOMAIN, np.column_stack([a, b, c, d, e]))


def plus_one(data: AggregatedData, record=(1, 0, 1, 0, 1)) -> AggregatedData:
    return AggregatedData.from_codes(DOMAIN, np.vstack([data.expand(), [record]]))


def run(data, relation=ADD_REMOVE, *, seed=0, oracle=None, ledger=None, options=OPTIONS, budget=BUDGET, **kw):
    """One oracle-path run with the clip budget a plan would reserve for it (``CALLS * CLIP_BOUND``)."""
    ledger = ZcdpLedger(budget, CALLS * CLIP_BOUND) if ledger is None else ledger
    oracle = OracleSelection(QC, BruteForceOracle()) if oracle is None else oracle
    release = measure(data, QC, budget=budget, relation=relation, ledger=ledger, rng=PrivateRandom(seed),
                      options=options, progress=False, oracle=oracle, **kw)
    return release, ledger


class Wire:
    """Records what the loop hands RSPM (and the objective it builds), optionally forcing RSPM's query.

    The real RSPM runs (and charges the ledger); a forced query replaces only
    the query of its result, as an oracle with an adversarial tie-break could.
    """

    def __init__(self, monkeypatch, query=None):
        self.calls: list[tuple[object, dict, object]] = []
        self.games: list[tuple[AggregatedData, AggregatedData]] = []
        self.rates: list[Fraction] = []  # the rate DLap noise is actually drawn at, per RSPM call
        real_rspm, real_game, real_vector = (rounds.rspm, rounds.game_instance,
                                             rspm_module.discrete_laplace_vector)

        def rspm(instance, **kwargs):
            result = real_rspm(instance, **kwargs)
            if query is not None:
                result = replace(result, query=query)
            self.calls.append((instance, kwargs, result))
            return result

        def game_instance(query_class, real, synthetic):
            self.games.append((real, synthetic))
            return real_game(query_class, real, synthetic)

        def vector(m, s, t, rng):
            self.rates.append(Fraction(s, t))
            return real_vector(m, s, t, rng)

        monkeypatch.setattr(rounds, "rspm", rspm)
        monkeypatch.setattr(rounds, "game_instance", game_instance)
        monkeypatch.setattr(rspm_module, "discrete_laplace_vector", vector)


def check_rspm_calls(wire: Wire, ledger: ZcdpLedger, relation: str) -> None:
    """§8.1 (b), §8.2 (M3): Delta = 2N under both relations, c = 2N + 1, charged eps**2/2 exactly."""
    events = [e for e in ledger.events if e.mechanism == "rspm"]
    assert len(wire.calls) == len(events) == CALLS
    for (_, kwargs, result), event in zip(wire.calls, events):
        epsilon = kwargs["epsilon"]
        assert kwargs["sensitivity"] == 2 * N, "RSPM's objective uses the true n: Delta = 2N under both relations"
        assert kwargs["relation"] == relation and event.relation == relation
        assert event.rho == pure_rho(epsilon) == epsilon**2 / 2
        assert result.m == M and result.c == 2 * N + 1
        assert result.lam == epsilon / (M * (2 * N + 1))
    assert wire.rates == [result.lam for _, _, result in wire.calls]  # the noise is drawn at that rate
    for real, synthetic in wire.games:
        assert synthetic.n == N


# ----------------------------------------------------------------------------------------- 1. RSPM's charge
@pytest.mark.parametrize("relation,_", RELATIONS)
def test_rspm_is_handed_delta_2n_and_charged_eps_squared_over_2(monkeypatch, relation, _):
    wire = Wire(monkeypatch)
    data = table()
    release, ledger = run(data, relation)
    assert release.rounds == OPTIONS.max_rounds
    check_rspm_calls(wire, ledger, relation)
    # every RSPM round is an oracle round of the public schedule, and its selection is recorded as such
    rspm_rounds = [int(re.search(r"round (\d+)", e.note).group(1)) for e in ledger.events if e.mechanism == "rspm"]
    assert rspm_rounds == [2, 4, 6]
    chosen = [m for m in release.measurements if m.selected_by == "rspm"]
    assert [m.selection_epsilon for m in chosen] == [kw["epsilon"] for _, kw, _ in wire.calls]
    assert all(m.selection_rho == pure_rho(m.selection_epsilon) for m in chosen)


@pytest.mark.parametrize("relation", [ADD_REMOVE, REPLACE_ONE])
def test_the_objective_rspm_receives_moves_by_exactly_2n_on_neighbours(monkeypatch, relation):
    """Brute force over neighbours of the first RSPM call's objective (the sample P held fixed): its
    difference sensitivity is 2N, attained, so the sensitivity handed to RSPM may not be smaller."""
    wire = Wire(monkeypatch)
    data = table()
    run(data, relation)
    real, synthetic = wire.games[0]
    assert real is data
    queries = QC.enumerate()

    def objective(d: AggregatedData) -> np.ndarray:
        instance = game_instance(QC, d, synthetic)  # the real objective (the wire only records it)
        return QC.answer(queries, instance.codes, instance.weights).astype(np.int64)

    base = objective(data)
    universe = [np.array(x) for x in np.ndindex(*DOMAIN.sizes)]
    rows = data.expand()
    if relation == ADD_REMOVE:
        neighbours = [np.vstack([rows, x]) for x in universe]
        neighbours += [np.delete(rows, int(np.flatnonzero((rows == code).all(axis=1))[0]), axis=0)
                       for code in data.codes]
    else:
        neighbours = []
        for code in data.codes[:4]:
            i = int(np.flatnonzero((rows == code).all(axis=1))[0])
            for x in universe:
                changed = rows.copy()
                changed[i] = x
                neighbours.append(changed)
    delta = max(int(np.ptp(objective(AggregatedData.from_codes(DOMAIN, r)) - base)) for r in neighbours)
    assert delta == 2 * N
    assert all(kw["sensitivity"] >= delta for _, kw, _ in wire.calls)


def test_a_halved_rspm_sensitivity_is_caught(monkeypatch):
    """The mutation check of §8.8 item 3, kept as a test: Delta = N instead of 2N makes the check fail."""
    monkeypatch.setattr(rounds, "difference_sensitivity", lambda W, relation, objective: int(W))
    wire = Wire(monkeypatch)
    _, ledger = run(table())
    with pytest.raises(AssertionError, match="Delta = 2N"):
        check_rspm_calls(wire, ledger, ADD_REMOVE)


# ----------------------------------------------------------------------------------------- 2. widening
class Measured:
    """Records every Gaussian measurement the loop makes: what it answers and the scale it draws at."""

    def __init__(self, monkeypatch):
        self.calls: list[dict] = []
        self.draws: list[tuple[int, Fraction]] = []
        self.rounds: list[dict] = []
        real_one, real_draw, real_round = (state.measure_one, state.discrete_gaussian_array, rounds._oracle_round)

        def measure_one(answers, attrs, sigma2, sensitivity_sq, **kw):
            self.calls.append(dict(answers=np.array(answers), attrs=attrs, sigma2=sigma2,
                                   sensitivity_sq=sensitivity_sq, **kw))
            return real_one(answers, attrs, sigma2, sensitivity_sq, **kw)

        def draw(size, sigma2, rng):
            self.draws.append((size, sigma2))
            return real_draw(size, sigma2, rng)

        def oracle_round(*args, **kw):
            self.rounds.append(kw)
            return real_round(*args, **kw)

        for module in (state, rounds):  # the marginals' measurements, the oracle and record rounds'
            monkeypatch.setattr(module, "measure_one", measure_one)
        monkeypatch.setattr(state, "discrete_gaussian_array", draw)
        monkeypatch.setattr(rounds, "_oracle_round", oracle_round)

    def rspm_measurements(self) -> list[dict]:
        return [c for c in self.calls if c.get("selected_by") == "rspm"]


def check_oracle_round_budgets(measured: Measured, ledger: ZcdpLedger, release) -> None:
    """An oracle round spends at most its rho: RSPM's eps**2/2 within the selection's share, then the
    measurement within the rest, each fixed before its step and each within rounding of its share (§8.4)."""
    share = OPTIONS.wide_share
    planned = OPTIONS.rounds_per_attribute * len(DOMAIN)
    rspm_events = [e for e in ledger.events if e.mechanism == "rspm"]
    chosen = [m for m in release.measurements if m.selected_by == "rspm"]
    assert len(measured.rounds) == len(rspm_events) == len(chosen) == CALLS
    for kw, event, m in zip(measured.rounds, rspm_events, chosen):
        select, meas = kw["select_rho"], kw["measure_rho"]
        spend = select + meas
        assert select == share * spend
        assert event.rho == pure_rho(m.selection_epsilon) <= select
        assert event.rho >= select * (1 - Fraction(1, 10**9))
        assert meas * (1 - Fraction(1, 10**4)) <= m.rho <= meas
        assert event.rho + m.rho <= spend
    # the oracle rounds before the last spend one round's rho: budget / planned, grown fourfold by each annealing
    for kw in measured.rounds[:-1]:
        ratio = (kw["select_rho"] + kw["measure_rho"]) / (BUDGET / planned)
        assert ratio.denominator == 1 and ratio.numerator in {4**k for k in range(20)}
    # the last round (an oracle round here) takes exactly what is left, rounded down
    assert BUDGET * (1 - Fraction(1, 10**4)) <= ledger.spent <= BUDGET


def forced_run(monkeypatch, query, relation):
    """A run whose RSPM calls all return ``query``: the data, release, ledger, spies and the RSPM measurements."""
    Wire(monkeypatch, query=query)
    measured = Measured(monkeypatch)
    data = table()
    release, ledger = run(data, relation)
    chosen = [m for m in release.measurements if m.selected_by == "rspm"]
    assert len(chosen) == CALLS
    return data, release, ledger, measured, chosen


@pytest.mark.parametrize("relation,sens_sq", RELATIONS)
def test_a_narrow_selection_is_widened_to_its_marginal_and_charged_as_one(monkeypatch, relation, sens_sq):
    data, release, ledger, measured, chosen = forced_run(monkeypatch, NARROW, relation)
    for m, call in zip(chosen, measured.rspm_measurements()):
        assert m.attrs == (0, 2) and m.query is None and m.names == ("a", "c")
        assert call["sensitivity_sq"] == sens_sq
        assert np.array_equal(call["answers"], data.marginal((0, 2)).reshape(-1))  # all 4 cells, exact counts
        assert m.rho == gaussian_rho(sens_sq, m.sigma2) == Fraction(sens_sq) / (2 * m.sigma2)
    gauss = [e for e in ledger.events if e.mechanism == "gaussian"]
    assert [s2 for _, s2 in measured.draws] == [c["sigma2"] for c in measured.calls]  # drawn at the charged scale
    assert [e.rho for e in gauss] == [m.rho for m in release.measurements]
    rspm_draws = [(size, s2) for (size, s2), c in zip(measured.draws, measured.calls) if c.get("selected_by") == "rspm"]
    assert rspm_draws == [(4, m.sigma2) for m in chosen]
    check_oracle_round_budgets(measured, ledger, release)


@pytest.mark.parametrize("relation,_", RELATIONS)
def test_a_wide_selection_is_measured_alone_with_sensitivity_one(monkeypatch, relation, _):
    data, release, ledger, measured, chosen = forced_run(monkeypatch, WIDE, relation)
    truth = int(QC.answer([WIDE], data.codes, data.counts)[0])
    for m, call in zip(chosen, measured.rspm_measurements()):
        assert m.attrs == (0, 1, 2, 3, 4) and m.query == QC.describe(WIDE) == "a=1 AND b=1 AND c=1 AND d=1 AND e=1"
        assert call["sensitivity_sq"] == 1 and call["answers"].tolist() == [truth]
        assert m.rho == gaussian_rho(1, m.sigma2)
        assert m.estimator == REWEIGHTED_SAMPLE  # no clique of the model holds all five attributes
    rspm_draws = [(size, s2) for (size, s2), c in zip(measured.draws, measured.calls) if c.get("selected_by") == "rspm"]
    assert rspm_draws == [(1, m.sigma2) for m in chosen]
    check_oracle_round_budgets(measured, ledger, release)


def test_widening_is_a_function_of_the_query_alone(monkeypatch):
    """Same selected query, different data (or its complement): the same measured group."""
    outcomes = {}
    for name, query in [("narrow", NARROW), ("not narrow", Not(NARROW)), ("wide", WIDE), ("not wide", Not(WIDE))]:
        for label, data in [("D", table()), ("D+1", plus_one(table())), ("other", table(200, seed=7))]:
            with monkeypatch.context() as patch:
                Wire(patch, query=query)
                release, _ = run(data, seed=3)
            outcomes[name, label] = [(m.attrs, m.query) for m in release.measurements if m.selected_by == "rspm"]
    for name in ("narrow", "not narrow"):
        assert {tuple(outcomes[name, label]) for label in ("D", "D+1", "other")} == {(((0, 2), None),) * CALLS}
    assert {tuple(outcomes["wide", label]) for label in ("D", "D+1", "other")} == \
        {(((0, 1, 2, 3, 4), QC.describe(WIDE)),) * CALLS}
    assert {tuple(outcomes["not wide", label]) for label in ("D", "D+1", "other")} == \
        {(((0, 1, 2, 3, 4), QC.describe(Not(WIDE))),) * CALLS}


# ----------------------------------------------------------------------------------------- 3. filter and clips
@pytest.mark.parametrize("relation,_", RELATIONS)
def test_the_filter_never_overspends_and_clips_stay_within_their_reserve(monkeypatch, relation, _):
    wire = Wire(monkeypatch)
    release, ledger = run(table(), relation)
    assert ledger.spent <= ledger.rho_budget == BUDGET and release.rho_spent == ledger.spent
    assert sum(e.rho for e in ledger.events) == ledger.spent
    kappas = [result.clip_probability for _, _, result in wire.calls]
    assert all(0 < k <= CLIP_BOUND for k in kappas)  # one call's clip fits what a plan reserves per call
    assert ledger.clip_spent == sum(kappas) <= ledger.clip_budget == CALLS * CLIP_BOUND
    # Theorem 8.1 charges (1 + e^eps) per clip; a call's eps may exceed the plan's epsilon (its rho is the
    # filter's, not eps), so the plan's reserve (1 + e^epsilon) CLIP_BOUND per call holds because the default cap
    # makes a call's (1 + e^eps_call) kappa at most 2 e^-70, whatever eps_call is
    assert all(result.delta <= 2 * CLIP_BOUND for _, _, result in wire.calls)


@pytest.mark.parametrize("budget", [Fraction(1, 10**5), Fraction(1, 20), Fraction(30)])
@pytest.mark.parametrize("oracle_every,record_every", [(1, 0), (3, 2)])
def test_any_schedule_ends_within_the_budget_taking_what_is_left(budget, oracle_every, record_every):
    """Tiny to large budgets, RSPM every round or interleaved with record rounds, annealing or not: the run
    is never refused by its ledger, spends at most its budget, and its last round takes what is left (§8.4)."""
    # one planned round per attribute (5) under a cap of 12: the budget runs out before the cap, so the filter
    # itself must end the run
    options = replace(OPTIONS, rounds_per_attribute=1, oracle_every=oracle_every, record_every=record_every,
                      max_rounds=12)
    ledger = ZcdpLedger(budget, 12 * CLIP_BOUND)
    release, _ = run(table(), REPLACE_ONE, options=options, ledger=ledger, budget=budget, seed=1)
    assert budget * (1 - Fraction(1, 10**3)) <= ledger.spent <= budget and ledger.clip_spent <= ledger.clip_budget
    assert release.rounds < 12 and sum(e.mechanism == "rspm" for e in ledger.events) <= release.rounds


def test_a_ledger_without_clip_budget_refuses_rspm_and_records_nothing():
    ledger = ZcdpLedger(Fraction(1))
    with pytest.raises(PrivacyError, match="clip"):
        ledger.spend("rspm", Fraction(1, 10), Fraction(0), ADD_REMOVE, "round 2", clip=Fraction(1, 10**40))
    assert ledger.events == [] and ledger.spent == 0 and ledger.clip_spent == 0
    # a run whose ledger reserved nothing for clips stops at its first RSPM call, before RSPM draws
    ledger = ZcdpLedger(BUDGET)
    with pytest.raises(PrivacyError, match="clip"):
        run(table(), ledger=ledger)
    assert [e.mechanism for e in ledger.events] == ["gaussian"] * len(DOMAIN) + ["exponential", "gaussian"]


def _measure_plan(schema, query_class: str, epsilon: float = 1.0, delta: float = 1e-9):
    return make_plan(SynthesisConfig(epsilon=epsilon, delta=delta, schema=schema, method="measure",
                                     query_class=query_class), schema).method_plan


def test_plan_reserves_the_clips_out_of_delta_before_converting(demo, monkeypatch):
    """rho = rho_for_dp(eps, delta - round_up((1 + e^eps) clip_budget)), clip_budget = calls * CLIP_BOUND."""
    _, schema = demo
    with_rspm = MeasureOptions(oracle_every=8)  # 48 planned rounds on the demo's 6 attributes: 6 RSPM calls
    monkeypatch.setattr(algorithm, "MeasureOptions", lambda: with_rspm)  # what plan_measure builds
    bound = Fraction(1, 10**11)  # a clip bound large enough for the reserve to move rho
    monkeypatch.setattr(rspm_module, "CLIP_BOUND", bound)
    epsilon, delta = 1.0, 1e-9
    plan = _measure_plan(schema, "halfspaces:1", epsilon, delta)
    assert plan.oracle is not None and plan.options == with_rspm and plan.clip_budget == 6 * bound
    reserve = round_up((1 + math.exp(epsilon)) * float(6 * bound))
    assert plan.rho.value == rho_for_dp(epsilon, Fraction(delta) - reserve)
    marginal = _measure_plan(schema, "marginals:2", epsilon, delta)
    assert marginal.clip_budget == 0 and plan.rho.value < marginal.rho.value == rho_for_dp(epsilon, delta)
    monkeypatch.setattr(rspm_module, "CLIP_BOUND", Fraction(1, 10**10))  # reserve (1 + e) 6e-10 > delta
    with pytest.raises(InputError, match="too small for 6 RSPM calls"):
        _measure_plan(schema, "halfspaces:1", epsilon, delta)


def test_the_real_clip_bound_costs_next_to_nothing_and_no_rspm_rounds_reserve_nothing(demo, monkeypatch):
    _, schema = demo
    marginal = _measure_plan(schema, "marginals:2")
    default = _measure_plan(schema, "halfspaces")
    assert MeasureOptions().oracle_every == 0 and default.oracle is not None
    assert default.clip_budget == 0 and default.rho.value == marginal.rho.value
    monkeypatch.setattr(algorithm, "MeasureOptions", lambda: MeasureOptions(oracle_every=8))
    plan = _measure_plan(schema, "halfspaces")
    assert plan.clip_budget == 6 * CLIP_BOUND and 0 < CLIP_BOUND <= Fraction(math.exp(-70)) * (1 + Fraction(1, 10**6))
    assert plan.rho.value <= marginal.rho.value


# ----------------------------------------------------------------------------------------- 4. the true n
FAST = replace(OPTIONS, widen_cells=16)


def test_add_remove_neighbours_release_the_same_unpaid_values(demo, monkeypatch):
    """D and D plus one record, same seed, through generate_synthetic with a class no marginal covers: the plan,
    rho, clip reserve, rows, the public schedule of RSPM rounds, Delta handed to RSPM, and everything before
    the first measurement that a selection chose are identical (§8.6, §8.8 item 4)."""
    df, schema = demo
    monkeypatch.setattr(algorithm, "MeasureOptions", lambda: FAST)  # what plan_measure builds
    small = df.head(300)
    plus = df.head(301)
    runs = []
    for d in (small, plus):
        with monkeypatch.context() as patch:
            wire = Wire(patch)
            res = synthdp.generate_synthetic(d, "halfspaces:1", method="measure", epsilon=1.0, delta=1e-9,
                                             random_state=5, progress=False, schema=schema, n_rows=123)
        runs.append((res, wire))
    (r1, w1), (r2, w2) = runs
    a, b = r1.report.to_dict(), r2.report.to_dict()
    assert len(r1.data) == len(r2.data) == a["rows_written"] == b["rows_written"] == 123
    paid = {"measurements", "zcdp_ledger", "selected_queries", "rho_spent", "rounds"}  # chosen by paid steps
    assert {k: v for k, v in a.items() if k not in paid} == {k: v for k, v in b.items() if k not in paid}
    assert {"plan", "rho_budget", "clip_budget", "epsilon_spent", "delta_spent", "ledger", "rows_written"} <= set(a)
    assert a["plan"]["query_oracle"]["value"] == "cpsat" and a["plan"]["mode"]["value"] == "E"
    assert Fraction(a["clip_budget"]) == FAST.max_rounds // FAST.oracle_every * CLIP_BOUND
    d = len(df.columns)
    assert a["measurements"][:d] == b["measurements"][:d] and a["zcdp_ledger"][: d + 1] == b["zcdp_ledger"][: d + 1]
    for rep, wire in ((a, w1), (b, w2)):
        assert rep["rounds"] == FAST.max_rounds
        selections = [m["selected_by"] for m in rep["measurements"][d:]]
        assert selections == ["exponential", "rspm"] * (FAST.max_rounds // 2)
        assert [kw["sensitivity"] for _, kw, _ in wire.calls] == [2 * FAST.oracle_samples] * 3
    assert [c.lam / c.epsilon for _, _, c in w1.calls] == [c.lam / c.epsilon for _, _, c in w2.calls]
    assert list(r1.data.dtypes) == list(r2.data.dtypes)


def test_the_true_n_is_read_only_by_the_rspm_objective(monkeypatch):
    """The EM scores, the estimators and the row count never read n (§8.6); only RSPM's objective does (§8.1 (b))."""
    data = table()
    inside = []
    real_n = AggregatedData.n
    real_game = rounds.game_instance

    def guarded(self):
        if self is data and not inside:
            raise AssertionError("the true number of records was read outside RSPM's objective")
        return real_n.fget(self)

    def game_instance(query_class, real, synthetic):
        inside.append(True)
        try:
            return real_game(query_class, real, synthetic)
        finally:
            inside.pop()

    monkeypatch.setattr(AggregatedData, "n", property(guarded))
    monkeypatch.setattr(rounds, "game_instance", game_instance)
    release, _ = run(data)
    assert len(release.records) == max(1, round(release.model_total))
    release, _ = run(data, n_rows=77)
    assert len(release.records) == 77


# ----------------------------------------------------------------------------------------- 5. reweighting
SMALL = Domain(tuple("wxyz"), (2,) * 4)
SMALL_QC = ComplementClosed(Conjunctions(SMALL))


def _xor_table(n: int = 4000) -> AggregatedData:
    """z = w xor x xor y: every 2-way marginal is uniform-ish, the 4-way cells are not."""
    gen = np.random.default_rng(11)
    w, x, y = (gen.integers(0, 2, n) for _ in range(3))
    z = w ^ x ^ y ^ (gen.random(n) < 0.05)
    return AggregatedData.from_codes(SMALL, np.column_stack([w, x, y, z]))


def test_reweighting_matches_a_measurement_the_model_cannot_hold():
    data = _xor_table()
    local = [(0, 1), (1, 2), (2, 3)]
    noisy = [NoisyMarginal(m, data.marginal(m).reshape(-1).astype(float), 1.0) for m in local]
    model = estimators.fit(SMALL, noisy, 200)
    assert model.holder((0, 1, 2, 3)) is None
    wide = Conjunction(((0, 1), (1, 1), (2, 1), (3, 1)))
    truth = float(SMALL_QC.answer([wide], data.codes, data.counts)[0])
    groups = [marginal_group(SMALL, y) for y in noisy] + [query_group(SMALL_QC, wide, truth, 1.0, "wide")]
    fitted = fit_weights(model, groups, support=4000, iters=400, generator=np.random.default_rng(0))
    accepted = SMALL_QC.evaluate([wide], SMALL_QC.features(fitted.codes))[0].astype(bool)
    before = model.total * accepted.mean()  # the model alone: equal weights on the same support
    after = float(fitted.weights[accepted].sum())
    assert abs(before - truth) > 100  # the chain model cannot see the 4-way dependence
    assert abs(after - truth) <= abs(before - truth) / 3
    assert fitted.total == pytest.approx(model.total, rel=1e-9) and (fitted.weights >= 0).all()
    for m, y in zip(local, noisy):  # and it keeps the local measurements it was fitted to
        assert np.abs(fitted.counts(m) - y.counts).max() < 0.05 * model.total


def test_weighted_sample_draws_each_record_within_one_of_its_share():
    codes = np.array(list(np.ndindex(*SMALL.sizes)))  # 16 distinct records
    weights = np.random.default_rng(2).random(16) * 50
    weights[[3, 9]] = 0.0
    sample = WeightedSample(SMALL, codes, weights)
    for rows, seed in [(1000, 0), (37, 1), (5, 2)]:
        drawn = sample.sample(rows, np.random.default_rng(seed))
        assert drawn.shape == (rows, 4)
        counts = np.array([(drawn == c).all(axis=1).sum() for c in codes])
        assert np.all(np.abs(counts - rows * weights / weights.sum()) < 1)
        assert counts[3] == counts[9] == 0


def test_query_attributes_reads_the_query_alone():
    d = Domain(("a", "b", "c", "d"), (2, 3, 2, 4))
    conj = ComplementClosed(Conjunctions(d))
    assert query_attributes(conj, Conjunction(((1, 2), (3, 0)))) == (1, 3)
    assert query_attributes(conj, Not(Conjunction(((0, 1), (2, 0), (3, 3))))) == (0, 2, 3)
    parities = ComplementClosed(Parities(d))
    # features: a=1 | b=0 b=1 b=2 | c=1 | d=0 d=1 d=2 d=3
    assert query_attributes(parities, Parity((1, 3, 8))) == (1, 3)
    assert query_attributes(parities, Not(Parity((0, 4)))) == (0, 2)
    halfspaces = Halfspaces(d)
    assert query_attributes(halfspaces, Halfspace((0, 0, 1, 0, -1, 0, 0, 0, 1), 1)) == (1, 2, 3)
    assert query_attributes(halfspaces, Halfspace((1,) + (0,) * 8, 0)) == (0,)
    disj = ComplementClosed(Disjunctions(Conjunctions(d)))
    assert query_attributes(disj, Disjunction(Conjunction(((0, 0), (3, 1))))) == (0, 3)
    assert query_attributes(disj, Not(Disjunction(Conjunction(((2, 1),))))) == (2,)


def test_rspm_selection_needs_a_complement_closed_class():
    """§4.1's objective finds the queries the estimate under-counts; their complements are the over-counted ones."""
    with pytest.raises(InputError, match="complement-closed class, got conjunctions"):
        OracleSelection(Conjunctions(DOMAIN), BruteForceOracle())


# ----------------------------------------------------------------------------------------- 6. Mode E / Mode N
ALWAYS_FAILS = dict(fail=lambda instance: 1.0)


def test_mode_e_abandons_the_release_on_a_solver_fail():
    ledger = ZcdpLedger(BUDGET, CALLS * CLIP_BOUND)
    with pytest.raises(PrivacyError, match="FAIL in Mode E.*abandoned"):
        run(table(), oracle=OracleSelection(QC, AdversarialOracle(**ALWAYS_FAILS)), ledger=ledger)
    # the RSPM call was paid before the oracle ran; nothing was measured after it
    assert [e.mechanism for e in ledger.events][-3:] == ["exponential", "gaussian", "rspm"]


def test_mode_e_fail_through_generate_synthetic_produces_no_output(demo, failing_oracle_plan):
    df, schema = demo
    with pytest.raises(PrivacyError, match="abandoned"):
        synthdp.generate_synthetic(df.head(300), "halfspaces:1", method="measure", epsilon=1.0, delta=1e-9,
                                   random_state=0, progress=False, schema=schema)


def test_mode_n_measures_nothing_in_a_failed_round_and_goes_on(monkeypatch):
    wire = Wire(monkeypatch)
    ledger = ZcdpLedger(BUDGET, CALLS * CLIP_BOUND)
    oracle = OracleSelection(QC, AdversarialOracle(**ALWAYS_FAILS), "N", Limits(time_limit=30.0))
    release, ledger = run(table(), oracle=oracle, ledger=ledger)
    assert release.rounds == OPTIONS.max_rounds and len(release.records) > 0
    assert len(wire.calls) == CALLS and all(r.query is None and r.conditional for _, _, r in wire.calls)
    assert not any(m.selected_by == "rspm" for m in release.measurements)
    mechanisms = [e.mechanism for e in ledger.events]
    assert mechanisms.count("rspm") == CALLS
    assert all(mechanisms[i + 1] != "gaussian" for i, m in enumerate(mechanisms[:-1]) if m == "rspm")
    assert all("conditional on no solver failure" in e.note for e in ledger.events if e.mechanism == "rspm")
    assert ledger.spent <= BUDGET


def _mode_n_run(df, schema):
    res = synthdp.generate_synthetic(df.head(300), "halfspaces:1", method="measure", epsilon=1.0, delta=1e-9,
                                     random_state=0, progress=False, schema=schema, time_limit=5.0, n_rows=50)
    assert res.report.conditional and res.report.plan["mode"]["value"] == "N" and len(res.data) == 50
    assert "conditional on no solver failure" in res.report.summary()
    assert not any(m["selected_by"] == "rspm" for m in res.report.measurements)
    assert 1 <= sum(e["mechanism"] == "rspm" for e in res.report.zcdp_ledger) <= FAST.max_rounds // FAST.oracle_every


@pytest.fixture
def failing_oracle_plan(monkeypatch):
    """Plans whose RSPM rounds run every other round with an oracle that always FAILs."""
    monkeypatch.setattr(algorithm, "MeasureOptions", lambda: FAST)
    monkeypatch.setattr(measure_method, "choose_oracle",
                        lambda name, qc, role: (AdversarialOracle(**ALWAYS_FAILS), "a failing stub"))


def test_mode_n_release_is_marked_conditional(demo, monkeypatch, failing_oracle_plan):
    """plan_measure picks Mode N when a time limit is given; the release is then marked conditional.
    (The config's refusal of game-only settings is lifted here: the next test covers it.)"""
    df, schema = demo
    monkeypatch.setattr(plan_module, "given_options", lambda options, defaults: ())
    _mode_n_run(df, schema)


def test_method_measure_accepts_a_time_limit_for_its_rspm_rounds(demo, failing_oracle_plan):
    """plan_measure reads time_limit (Mode N) and oracle for the RSPM rounds, so method='measure' must accept them
    for a class served by RSPM (the brief's Mode N through generate_synthetic)."""
    df, schema = demo
    _mode_n_run(df, schema)


@pytest.mark.parametrize("spec", ["conjunctions", "disjunctions:2", "monotone:2", "parities:3", "halfspaces"])
def test_the_widened_marginal_determines_the_query(spec):
    """Every query is a function of the attributes query_attributes names: records that agree there get the same
    answer, so the widened marginal's cells determine the query's count (brute force over the record universe)."""
    d = Domain(("a", "b", "c", "d"), (2, 3, 2, 4))
    qc = parse_query_class(spec, d)
    if spec == "halfspaces":
        gen = np.random.default_rng(0)
        n = qc.n_features
        queries = [Halfspace(tuple(int(w) for w in gen.integers(-1, 2, n) * (gen.random(n) < 0.4)),
                             int(gen.integers(-2, 3))) for _ in range(300)]
    else:
        queries = qc.enumerate()
    universe = np.array(list(np.ndindex(*d.sizes)))
    values = qc.evaluate(queries, qc.features(universe))
    for q, row in zip(queries, values):
        attrs = query_attributes(qc, q)
        cell = d.flat_index(universe, attrs) if attrs else np.zeros(len(universe), dtype=np.int64)
        for c in np.unique(cell):
            assert len(set(row[cell == c].tolist())) == 1, (spec, q, attrs)
